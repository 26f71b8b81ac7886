// The otpauth URI as a QR code made of text, for a terminal: `qrcode` draws it
// with half-block characters (two modules per character row), small enough
// for an 80x24 window and readable by phone cameras from the screen.
import QRCode from 'qrcode';

export function terminalQrCode(text: string): Promise<string> {
  return QRCode.toString(text, { type: 'terminal', small: true, errorCorrectionLevel: 'M' });
}
