// The console's frame: who is signed in (GET /auth/session), the sign-in page until a two-factor session
// is open, then the database picker and the pages. Pages are chosen by the URL's hash (#documents,
// #query, #indexes, #subscriptions, #tenant, #hosts), so the gateway serves one page, `/`, and the browser's back button still works.
import { type ReactNode, useCallback, useEffect, useState } from 'react';
import {
  ApiError,
  call,
  DatabasesSchema,
  NothingSchema,
  type Session,
  SessionSchema,
  setCsrfToken,
  setTenantScope,
  TenantsSchema,
  tenantPath,
} from './api.js';
import { Documents } from './Documents.js';
import { Hosts } from './hosts/Hosts.js';
import { Indexes } from './indexes/Indexes.js';
import { Query } from './Query.js';
import { canWrite } from './roles.js';
import { SignIn } from './SignIn.js';
import { Subscriptions } from './subscriptions/Subscriptions.js';
import { Tenant } from './tenant/Tenant.js';

const PAGES = [
  ['documents', 'Documents'],
  ['query', 'Query'],
  ['indexes', 'Indexes'],
  ['subscriptions', 'Subscriptions'],
  ['tenant', 'Tenant'],
  ['hosts', 'Hosts'],
] as const;
type Page = (typeof PAGES)[number][0];

function pageOfHash(): Page {
  const wanted = window.location.hash.slice(1);
  return PAGES.find(([page]) => page === wanted)?.[0] ?? 'documents';
}

export function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [state, setState] = useState<'loading' | 'signed-out' | 'signed-in' | 'failed'>('loading');
  const [failure, setFailure] = useState('');

  const refresh = useCallback(async () => {
    try {
      const { body } = await call('GET', '/auth/session', SessionSchema);
      setCsrfToken(body.CsrfToken);
      setSession(body);
      setState('signed-in');
    } catch (error) {
      if (error instanceof ApiError && error.code === 'TwoFactorRequired') {
        setCsrfToken(null);
        setState('signed-out');
        return;
      }
      setFailure(error instanceof Error ? error.message : String(error));
      setState('failed');
    }
  }, []);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  async function signOut() {
    await call('POST', '/auth/sign-out', NothingSchema);
    setCsrfToken(null);
    setSession(null);
    setState('signed-out');
  }

  if (state === 'loading') return <p className="centered">Loading…</p>;
  if (state === 'failed') {
    return (
      <main className="centered">
        <h1>Rookery</h1>
        <p role="alert">The gateway did not answer as expected: {failure}</p>
      </main>
    );
  }
  if (state === 'signed-out' || session === null) return <SignIn onSignedIn={refresh} />;
  return <SignedIn session={session} onSignOut={signOut} />;
}

function SignedIn({ session, onSignOut }: { session: Session; onSignOut: () => Promise<void> }) {
  const [page, setPage] = useState<Page>(pageOfHash);
  const operator = session.Principal.Role.kind === 'operator';
  const [tenants, setTenants] = useState<string[]>([]);
  const [tenant, setTenant] = useState<string | null>(null);
  const [error, setError] = useState('');
  // An operator's pages act on the tenant picked here. Set while rendering, not in an effect: the pages'
  // own effects (which fetch) run before this component's, and must already build that tenant's paths.
  setTenantScope(operator ? tenant : null);

  useEffect(() => {
    const onHash = () => setPage(pageOfHash());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  useEffect(() => {
    if (!operator) return;
    call('GET', '/control/tenants', TenantsSchema).then(
      ({ body }) => {
        const ids = body.tenants.map((t) => t.id);
        setTenants(ids);
        setTenant((current) => current ?? ids[0] ?? null);
      },
      (failure: Error) => setError(failure.message),
    );
  }, [operator]);

  const picker = operator && (
    <label className="database">
      Tenant{' '}
      <select value={tenant ?? ''} onChange={(event) => setTenant(event.target.value)}>
        {tenants.map((id) => (
          <option key={id} value={id}>
            {id}
          </option>
        ))}
      </select>
    </label>
  );
  if (operator && tenant === null) {
    return (
      <main className="centered">
        <h1>Rookery</h1>
        {error ? <p role="alert">{error}</p> : <p>Loading the tenants…</p>}
      </main>
    );
  }
  return <Workspace key={tenant ?? ''} session={session} page={page} picker={picker} onSignOut={onSignOut} />;
}

/** The header and the pages of one tenant (an operator's pick, or the principal's own). */
function Workspace(props: {
  session: Session;
  page: Page;
  picker: ReactNode;
  onSignOut: () => Promise<void>;
}) {
  const { session, page } = props;
  const [databases, setDatabases] = useState<string[]>([]);
  const [database, setDatabase] = useState('');
  const [error, setError] = useState('');
  const role = session.Principal.Role;
  const writable = canWrite(role, database);
  // The control API answers tenant admins, and operators for the tenant they picked.
  const admin = role.kind === 'tenant-admin' || role.kind === 'operator';
  // The fleet's hosts are the operators' alone (GET /control/hosts answers 403 to anyone else).
  const operator = role.kind === 'operator';

  useEffect(() => {
    call('GET', tenantPath('databases'), DatabasesSchema).then(
      ({ body }) => {
        setDatabases(body.Databases);
        setDatabase((current) => current || body.Databases[0] || '');
      },
      (failure: Error) => setError(failure.message),
    );
  }, []);

  return (
    <div className="shell">
      <header className="top">
        <span className="brand">Rookery</span>
        <nav aria-label="Pages">
          {PAGES.filter(([name]) => (name === 'tenant' ? admin : name === 'hosts' ? operator : true)).map(
            ([name, title]) => (
              <a key={name} href={`#${name}`} aria-current={page === name ? 'page' : undefined}>
                {title}
              </a>
            ),
          )}
        </nav>
        {props.picker}
        <label className="database">
          Database{' '}
          <select value={database} onChange={(event) => setDatabase(event.target.value)}>
            {databases.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <span className="who">
          {session.Principal.Name} ({session.Principal.TenantId ?? 'operator'})
        </span>
        <button type="button" onClick={() => void props.onSignOut()}>
          Sign out
        </button>
      </header>
      <main>
        {error && <p role="alert">{error}</p>}
        {database === '' && !error && page !== 'tenant' && page !== 'hosts' && (
          <p>This tenant has no database yet: create one with PUT /admin/databases.</p>
        )}
        {database !== '' && page === 'documents' && (
          <Documents key={database} database={database} canWrite={writable} />
        )}
        {database !== '' && page === 'query' && <Query key={database} database={database} />}
        {admin && page === 'tenant' && <Tenant database={database} />}
        {operator && page === 'hosts' && <Hosts />}
        {database !== '' && page === 'subscriptions' && (
          <Subscriptions key={database} database={database} canWrite={writable} />
        )}
        {database !== '' && page === 'indexes' && (
          <Indexes key={database} database={database} canWrite={writable} />
        )}
      </main>
    </div>
  );
}
