// An authenticator enrolment shown once: its otpauth:// URI as a QR code (a data: PNG, which the CSP's
// img-src allows) and its secret for people who type it. Used where a tenant admin starts an enrolment
// (tenant/Principals.tsx) and where a person collects the one started for them (SignIn.tsx).
import QRCode from 'qrcode';

export interface ShownEnrolment {
  secret: string;
  qr: string;
}

export async function enrolmentToShow(secret: string, uri: string): Promise<ShownEnrolment> {
  return { secret, qr: await QRCode.toDataURL(uri, { margin: 2, width: 220 }) };
}

export function EnrolmentQr({ enrolment, name }: { enrolment: ShownEnrolment; name: string }) {
  return (
    <figure>
      <img src={enrolment.qr} alt={`Authenticator QR code for ${name}`} width={220} height={220} />
      <figcaption>
        Scan it with the authenticator app, or type the secret <code>{enrolment.secret}</code>. It is shown
        this once.
      </figcaption>
    </figure>
  );
}
