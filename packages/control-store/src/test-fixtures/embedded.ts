// A fresh embedded control plane in a temp dir for admin-operation tests: the
// real SQLite store, CA and master key at the paths the gateway reads.
import {
  type CertificateAuthority,
  loadOrCreateCertificateAuthority,
  loadOrCreateMasterKey,
} from '@rookery/pki';
import { makeTempDir } from '@rookery/testkit';
import { openControlStore } from '../open.js';
import { controlPaths } from '../paths.js';
import type { ControlStore } from '../store/control-store.js';

export interface EmbeddedControl {
  dataDir: string;
  store: ControlStore;
  ca: CertificateAuthority;
  masterKey: Buffer;
  close(): Promise<void>;
}

export async function openEmbeddedControl(): Promise<EmbeddedControl> {
  const { dir, cleanup } = makeTempDir('rookery-admin-');
  const paths = controlPaths(dir);
  const store = await openControlStore({ dataDir: dir });
  return {
    dataDir: dir,
    store,
    ca: await loadOrCreateCertificateAuthority(paths.certificateAuthority),
    masterKey: await loadOrCreateMasterKey(paths.masterKey),
    async close() {
      await store.close();
      cleanup();
    },
  };
}
