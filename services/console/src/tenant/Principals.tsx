// The tenant's principals (control API, /control/principals): for each, its certificates (issue with a
// PKCS#12 to download, whose key the control plane answers once and never keeps; revoke), and for people
// two-factor enrolment: either its QR code shown here once, to the admin who shows the person, or left for
// the person to collect once at their own sign-in (the admin never sees that secret). A page of
// PRINCIPALS_PER_PAGE at a time (the control API pages them; each card reads its own certificates), with
// Previous and Next.
import { useCallback, useEffect, useState } from 'react';
import { call, controlPath, describeError } from '../api.js';
import { EnrolmentQr, enrolmentToShow, type ShownEnrolment } from '../EnrolmentQr.js';
import {
  type Certificate,
  CertificatesSchema,
  EnrolmentSchema,
  EnrolmentStartedSchema,
  IssuedSchema,
  type Principal,
  PrincipalsSchema,
  RevokedSchema,
} from './schemas.js';

/** Principals shown at once: a card each, and each card reads its certificates. */
export const PRINCIPALS_PER_PAGE = 25;

export function Principals() {
  const [page, setPage] = useState<{ principals: Principal[]; total: number; start: number } | null>(null);
  const [start, setStart] = useState(0);
  const [failure, setFailure] = useState('');

  useEffect(() => {
    setFailure('');
    call(
      'GET',
      controlPath(`principals?start=${start}&pageSize=${PRINCIPALS_PER_PAGE}`),
      PrincipalsSchema,
    ).then(
      ({ body }) => setPage(body),
      (error: unknown) => setFailure(describeError(error)),
    );
  }, [start]);

  const last = page ? Math.min(page.start + page.principals.length, page.total) : 0;

  return (
    <section aria-labelledby="principals-heading">
      <h2 id="principals-heading">Principals and certificates</h2>
      {failure && (
        <p role="alert" className="error">
          {failure}
        </p>
      )}
      {page && page.total > PRINCIPALS_PER_PAGE && (
        <nav className="actions" aria-label="Pages of principals">
          <p role="status">
            Principals {page.principals.length === 0 ? 0 : page.start + 1}–{last} of {page.total}
          </p>
          <button
            type="button"
            disabled={page.start === 0}
            onClick={() => setStart(Math.max(0, page.start - PRINCIPALS_PER_PAGE))}
          >
            Previous principals
          </button>{' '}
          <button
            type="button"
            disabled={last >= page.total}
            onClick={() => setStart(page.start + PRINCIPALS_PER_PAGE)}
          >
            Next principals
          </button>
        </nav>
      )}
      {page?.principals.map((principal) => (
        <PrincipalCard key={principal.id} principal={principal} />
      ))}
    </section>
  );
}

function PrincipalCard({ principal }: { principal: Principal }) {
  const [certificates, setCertificates] = useState<Certificate[]>([]);
  const [password, setPassword] = useState('');
  const [download, setDownload] = useState<{ url: string; serial: string } | null>(null);
  const [enrolment, setEnrolment] = useState<ShownEnrolment | null>(null);
  const [leftForPerson, setLeftForPerson] = useState(false);
  const [failure, setFailure] = useState('');
  const base = controlPath(`principals/${encodeURIComponent(principal.id)}`);

  const reload = useCallback(async () => {
    const { body } = await call('GET', `${base}/certificates`, CertificatesSchema);
    setCertificates(body.certificates);
  }, [base]);

  useEffect(() => {
    reload().catch((error: unknown) => setFailure(describeError(error)));
  }, [reload]);
  // The object URL holds the private key in memory: let it go when it is replaced or the card leaves.
  useEffect(() => () => (download ? URL.revokeObjectURL(download.url) : undefined), [download]);

  async function act(action: () => Promise<void>) {
    setFailure('');
    try {
      await action();
    } catch (error) {
      setFailure(describeError(error));
    }
  }

  const issue = () =>
    act(async () => {
      const { body } = await call('POST', `${base}/certificates`, IssuedSchema, {
        body: { pkcs12Password: password },
      });
      if (body.pkcs12Base64 === null) throw new Error('The control plane answered no PKCS#12 bundle.');
      const bytes = Uint8Array.from(atob(body.pkcs12Base64), (c) => c.charCodeAt(0));
      const blob = new Blob([bytes], { type: 'application/x-pkcs12' });
      setDownload({ url: URL.createObjectURL(blob), serial: body.certificate.serial });
      setPassword('');
      await reload();
    });

  const revoke = (serial: string) =>
    act(async () => {
      await call('POST', controlPath(`certificates/${encodeURIComponent(serial)}/revoke`), RevokedSchema);
      await reload();
    });

  const enrol = () =>
    act(async () => {
      const { body } = await call('POST', `${base}/totp`, EnrolmentSchema, { body: { deliverTo: 'admin' } });
      setEnrolment(await enrolmentToShow(body.secret, body.uri));
    });

  const leaveForPerson = () =>
    act(async () => {
      await call('POST', `${base}/totp`, EnrolmentStartedSchema, { body: { deliverTo: 'person' } });
      setLeftForPerson(true);
    });

  const passwordId = `p12-password-${principal.id}`;
  return (
    <article className="principal" aria-labelledby={`principal-${principal.id}`}>
      <h3 id={`principal-${principal.id}`}>
        {principal.name}{' '}
        <small>
          ({principal.kind}, {principal.role.kind})
        </small>
      </h3>
      {failure && (
        <p role="alert" className="error">
          {failure}
        </p>
      )}
      <table>
        <caption>Certificates of {principal.name}</caption>
        <thead>
          <tr>
            <th scope="col">Serial</th>
            <th scope="col">Valid until</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {certificates.map((certificate) => (
            <tr key={certificate.serial}>
              <td>
                <code>{certificate.serial}</code>
              </td>
              <td>{new Date(certificate.notAfter).toISOString().slice(0, 10)}</td>
              <td>
                {certificate.revokedAt === null ? (
                  <button
                    type="button"
                    aria-label={`Revoke certificate ${certificate.serial}`}
                    onClick={() => void revoke(certificate.serial)}
                  >
                    Revoke
                  </button>
                ) : (
                  'revoked'
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void issue();
        }}
      >
        <label htmlFor={passwordId}>Password for the PKCS#12 file of a new certificate</label>
        <input
          id={passwordId}
          type="password"
          autoComplete="new-password"
          minLength={8}
          required
          value={password}
          onChange={(event) => setPassword(event.target.value)}
        />
        <button type="submit">Issue a certificate for {principal.name}</button>
      </form>
      {download && (
        <p>
          <a href={download.url} download={`${principal.name.replace(/\W+/g, '-')}-${download.serial}.p12`}>
            Download the PKCS#12 file of {download.serial}
          </a>{' '}
          (its private key is in this page only: it is not kept anywhere).
        </p>
      )}
      {principal.kind === 'person' && !enrolment && !leftForPerson && (
        <p className="actions">
          <button type="button" onClick={() => void enrol()}>
            Start two-factor enrolment for {principal.name}
          </button>{' '}
          <button type="button" onClick={() => void leaveForPerson()}>
            Let {principal.name} collect the enrolment at sign-in
          </button>
        </p>
      )}
      {leftForPerson && (
        <p role="status">
          Enrolment started: {principal.name} is shown the QR code once, on the sign-in page of the console,
          with their own certificate. Nobody else sees it.
        </p>
      )}
      {enrolment && <EnrolmentQr enrolment={enrolment} name={principal.name} />}
    </article>
  );
}
