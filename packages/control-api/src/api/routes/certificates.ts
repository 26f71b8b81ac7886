// Client certificates of a tenant's principals: issue (the private key is
// answered once and never stored), list, revoke. Registered under both
// prefixes, like the principal routes.

import { issuePrincipalCertificate, revokePrincipalCertificate } from '@rookery/control-store';
import { documented } from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../caller.js';
import { bodyOf, type ControlContext, paramsOf } from '../context.js';
import { CertificateParamsSchema, CertificateRequestSchema, PrincipalParamsSchema } from '../schemas.js';
import { certificateInTenant, principalInTenant, tenantInScope } from '../scope.js';

const PrincipalParams = documented(PrincipalParamsSchema);

export function certificateRoutes(app: FastifyInstance, { store, ca }: ControlContext): void {
  const issueSchema = {
    summary: "Issue a principal's client certificate (its private key is in this answer only)",
    params: PrincipalParams,
    body: documented(CertificateRequestSchema),
  };
  app.post('/principals/:principalId/certificates', { schema: issueSchema }, async (request, reply) => {
    const { tenantId, principalId } = paramsOf(PrincipalParamsSchema, request);
    const tenant = await tenantInScope(store, callerOf(request.raw), tenantId);
    const principal = await principalInTenant(store, tenant, principalId);
    const wanted = bodyOf(CertificateRequestSchema, request, 'certificate request');
    const issued = await issuePrincipalCertificate(store, ca, { ...wanted, principalId: principal.id });
    // The private key is in this answer and nowhere else: no cache on the way may keep it.
    return reply
      .code(201)
      .header('cache-control', 'no-store')
      .send({
        certificate: issued.record,
        certificatePem: issued.certPem,
        privateKeyPem: issued.keyPem,
        caPem: issued.caPem,
        pkcs12Base64: issued.pkcs12?.toString('base64') ?? null,
      });
  });

  const listSchema = { summary: "A principal's certificates", params: PrincipalParams };
  app.get('/principals/:principalId/certificates', { schema: listSchema }, async (request) => {
    const { tenantId, principalId } = paramsOf(PrincipalParamsSchema, request);
    const tenant = await tenantInScope(store, callerOf(request.raw), tenantId);
    const principal = await principalInTenant(store, tenant, principalId);
    return { certificates: await store.listCertificates(principal.id) };
  });

  const revokeSchema = { summary: 'Revoke a certificate', params: documented(CertificateParamsSchema) };
  app.post('/certificates/:serial/revoke', { schema: revokeSchema }, async (request) => {
    const { tenantId, serial } = paramsOf(CertificateParamsSchema, request);
    const tenant = await tenantInScope(store, callerOf(request.raw), tenantId);
    const record = await certificateInTenant(store, tenant, serial);
    // Gateways poll revocations every second, so the certificate stops working within about that.
    return revokePrincipalCertificate(store, record.serial);
  });
}
