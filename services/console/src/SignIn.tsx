// Sign-in the way the gateway works for people: the browser has already presented the person's client
// certificate (or this page would not have loaded); the code from their authenticator opens a two-factor
// session bound to this browser (an HttpOnly, Secure, SameSite=Strict cookie). A person whose enrolment a
// tenant admin started for them to collect (GET /auth/enrolment) is offered its QR code, once
// (POST /auth/enrolment answers it to this certificate one time).
import { type FormEvent, useEffect, useState } from 'react';
import { z } from 'zod';
import { ApiError, call, describeError, OpenedSchema, setCsrfToken } from './api.js';
import { EnrolmentQr, enrolmentToShow, type ShownEnrolment } from './EnrolmentQr.js';

const PendingSchema = z.looseObject({ Pending: z.boolean() });
const CollectedSchema = z.looseObject({ Secret: z.string(), Uri: z.string() });

export function SignIn({ onSignedIn }: { onSignedIn: () => Promise<void> }) {
  const [code, setCode] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [pending, setPending] = useState(false);
  const [enrolment, setEnrolment] = useState<ShownEnrolment | null>(null);

  useEffect(() => {
    // Programs and people without a started enrolment simply see no offer.
    call('GET', '/auth/enrolment', PendingSchema).then(
      ({ body }) => setPending(body.Pending),
      () => setPending(false),
    );
  }, []);

  async function collect() {
    setError('');
    try {
      const { body } = await call('POST', '/auth/enrolment', CollectedSchema);
      setEnrolment(await enrolmentToShow(body.Secret, body.Uri));
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setPending(false);
    }
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      const { body } = await call('POST', '/auth/2fa', OpenedSchema, {
        body: { code, minutes: 8 * 60, binding: 'browser' },
      });
      setCsrfToken(body.CsrfToken ?? null);
      await onSignedIn();
    } catch (failure) {
      setError(failure instanceof ApiError ? `${failure.message} (${failure.code})` : String(failure));
      setCode('');
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="sign-in">
      <h1>Sign in to Rookery</h1>
      {pending && (
        <section aria-labelledby="enrolment-heading" className="enrolment">
          <h2 id="enrolment-heading">Your authenticator</h2>
          <p>
            A tenant administrator started your two-factor enrolment. Its QR code is shown once, here: have
            your authenticator app ready.
          </p>
          <button type="button" onClick={() => void collect()}>
            Show my QR code
          </button>
        </section>
      )}
      {enrolment && (
        <section aria-labelledby="enrolment-heading" className="enrolment">
          <h2 id="enrolment-heading">Your authenticator</h2>
          <EnrolmentQr enrolment={enrolment} name="you" />
          <p>Then type the code your app shows below.</p>
        </section>
      )}
      <form onSubmit={submit} aria-describedby="sign-in-help">
        <label htmlFor="totp">Code from your authenticator app</label>
        <input
          id="totp"
          name="totp"
          inputMode="numeric"
          autoComplete="one-time-code"
          pattern="\d{6}"
          maxLength={6}
          required
          value={code}
          onChange={(event) => setCode(event.target.value.trim())}
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
      </form>
      <section id="sign-in-help" className="help">
        <h2>Your certificate</h2>
        <p>
          Your browser showed this page because it presented your Rookery client certificate. To use another
          browser or computer, have a tenant administrator issue your certificate as a PKCS#12 file (its
          password is read from the first line of a file):
        </p>
        <pre>
          <code>
            {`node -p "crypto.randomBytes(18).toString('base64url')" > p12-password.txt
./rookery cert issue <your-principal-id> --format pkcs12 --password-file p12-password.txt --out .rookery/me`}
          </code>
        </pre>
        <p>
          Then import <code>.rookery/me/&lt;your-name&gt;.p12</code> with that password: in Chrome or Edge
          under Settings → Privacy and security → Security → Manage certificates → Your certificates → Import;
          in Firefox under Settings → Privacy &amp; Security → Certificates → View Certificates → Your
          Certificates → Import; on macOS by opening the file in Keychain Access. An administrator enrols your
          authenticator with <code>./rookery totp enrol &lt;your-principal-id&gt;</code>.
        </p>
      </section>
    </main>
  );
}
