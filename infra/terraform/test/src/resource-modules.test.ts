// The AWS modules cannot be planned here (no provider can be downloaded), so what they promise is
// asserted on their parsed HCL: the values that matter are literals or come from the modules that
// `tofu test` proves (sizing, iam-policies, node-config).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Block, loadModule, locals, nested, only, ref, single } from './hcl.js';

const servicesDir = path.resolve(import.meta.dirname, '..', '..', '..', '..', 'services');

/** Every prom-client metric name (`name: 'rookery_…'`) the services' sources define, tests left out. */
function exportedMetricNames(): Set<string> {
  const names = new Set<string>();
  for (const service of fs.readdirSync(servicesDir)) {
    const src = path.join(servicesDir, service, 'src');
    if (!fs.existsSync(src)) continue;
    for (const file of fs.readdirSync(src, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
      const text = fs.readFileSync(path.join(src, file), 'utf8');
      for (const [, name] of text.matchAll(/name: '(rookery_[a-z0-9_]+)'/g)) names.add(name!);
    }
  }
  return names;
}

const NVME_FAMILIES =
  '^(i4i|i4g|i7ie|i8g|im4gn|is4gen|c5d|c6id|c6gd|c7gd|m5d|m6id|m6gd|m7gd|r5d|r6id|r6gd|r7gd|x2idn)\\\\.';

describe('gateway: a network load balancer passing TCP:443 through', async () => {
  const gateway = await loadModule('modules/gateway');

  // Both passthroughs (HTTPS, and RavenDB's TCP protocol for the official client's subscription worker) come
  // from one map, local.passthrough: each is a TCP listener and a target group of its own.
  const passthrough = String(locals(gateway).passthrough);

  it('listens on TCP 443 and forwards to the gateways: mutual TLS ends at the gateway', () => {
    expect(passthrough).toContain('listen = 443, target = var.gateway_port }');
    const listener = only(gateway.resource, 'aws_lb_listener', 'passthrough');
    expect(listener.for_each).toBe(ref('local.passthrough'));
    expect(listener.port).toBe(ref('each.value.listen'));
    expect(listener.protocol).toBe('TCP');
    expect(listener.certificate_arn).toBeUndefined();
    expect(nested(listener, 'default_action')).toMatchObject({
      type: 'forward',
      target_group_arn: ref('aws_lb_target_group.gateway[each.key].arn'),
    });
    expect(Object.keys(gateway.resource.aws_lb_listener ?? {})).toEqual(['passthrough']);
  });

  it("passes the RavenDB TCP port through on the gateways' own port, the one node-config renders", async () => {
    // GET /info/remote-task/tcp names the gateway's own port on the client's host name: the load balancer
    // must listen on that same port.
    expect(passthrough).toContain('listen = var.raven_tcp_port, target = var.raven_tcp_port }');
    expect(single(gateway.variable, 'raven_tcp_port').default).toBe(38888);
    expect(single(gateway.module, 'fleet').target_group_arns).toBe(
      ref('[for group in aws_lb_target_group.gateway : group.arn]'),
    );
    const deployment = await loadModule('modules/deployment');
    expect(single(deployment.module, 'gateway').raven_tcp_port).toBe(
      ref('module.gateway_config.raven_tcp_port'),
    );
  });

  it('is a network load balancer whose targets keep the client address', () => {
    const lb = only(gateway.resource, 'aws_lb', 'this');
    expect(lb.load_balancer_type).toBe('network');
    expect(nested(lb, 'access_logs').enabled).toBe(true);
    const group = only(gateway.resource, 'aws_lb_target_group', 'gateway');
    expect(group.for_each).toBe(ref('local.passthrough'));
    expect(group.protocol).toBe('TCP');
    expect(group.preserve_client_ip).toBe(true);
    expect(group.port).toBe(ref('each.value.target'));
  });

  it("health-checks GET /healthz over HTTP on the gateways' own health port, the one node-config renders", async () => {
    const check = nested(only(gateway.resource, 'aws_lb_target_group', 'gateway'), 'health_check');
    expect(check).toMatchObject({ protocol: 'HTTP', path: '/healthz', matcher: '200' });
    expect(check.port).toBe(ref('tostring(var.health_check_port)'));
    expect(single(gateway.variable, 'health_check_port').default).toBe(8444);
    const deployment = await loadModule('modules/deployment');
    expect(single(deployment.module, 'gateway').health_check_port).toBe(
      ref('module.gateway_config.health_port'),
    );
  });

  it('runs its instances through the fleet module, behind the load balancer', () => {
    const fleet = single(gateway.module, 'fleet');
    expect(fleet.source).toBe('../fleet');
    expect(fleet.health_check_type).toBe('ELB');
    expect(fleet.user_data).toBe(ref('var.user_data'));
  });
});

describe('fleet: every node', async () => {
  const fleet = await loadModule('modules/fleet');
  const template = only(fleet.resource, 'aws_launch_template', 'this');

  it('requires IMDSv2 and reaches metadata from the instance only', () => {
    const metadata = nested(template, 'metadata_options');
    expect(metadata.http_tokens).toBe('required');
    expect(metadata.http_put_response_hop_limit).toBe(1);
  });

  it('encrypts its root volume with the platform key', () => {
    const ebs = nested(nested(template, 'block_device_mappings'), 'ebs');
    expect(ebs.encrypted).toBe(true);
    expect(ebs.kms_key_id).toBe(ref('var.kms_key_arn'));
  });

  it('rolls new launch templates out gradually', () => {
    const group = only(fleet.resource, 'aws_autoscaling_group', 'this');
    const refresh = nested(group, 'instance_refresh');
    expect(refresh.strategy).toBe('Rolling');
  });

  it('has no egress to the internet: inside the VPC and S3 through its endpoint only', () => {
    const rules = fleet.resource.aws_vpc_security_group_egress_rule ?? {};
    for (const [name, [rule]] of Object.entries(rules) as [string, Block[]][]) {
      expect(rule?.cidr_ipv4 === ref('var.vpc_cidr_block') || rule?.prefix_list_id !== undefined, name).toBe(
        true,
      );
    }
  });
});

describe('host: NVMe instances drained before termination', async () => {
  const host = await loadModule('modules/host');
  const sizing = await loadModule('modules/sizing');

  it('accepts only NVMe instance families, the same list as the sizing module', () => {
    const validation = nested(single(host.variable, 'instance_type'), 'validation');
    expect(validation.condition).toContain(NVME_FAMILIES);
    const sizingValidation = nested(single(sizing.variable, 'host_instance_type'), 'validation');
    expect(sizingValidation.condition).toContain(NVME_FAMILIES);
  });

  it('holds terminating instances in a hook until they are drained', () => {
    const fleet = single(host.module, 'fleet');
    const hooks = fleet.initial_lifecycle_hooks as Block[];
    expect(hooks).toHaveLength(1);
    expect(hooks[0]?.lifecycle_transition).toBe('autoscaling:EC2_INSTANCE_TERMINATING');
    expect(hooks[0]?.name).toBe(ref('local.drain_hook'));
  });

  it('opens its relay to the gateways and its internal API to the workers, nothing to addresses', () => {
    const rule = only(host.resource, 'aws_vpc_security_group_ingress_rule', 'clients');
    expect(rule.referenced_security_group_id).toBe(ref('each.value.from'));
    expect(rule.cidr_ipv4).toBeUndefined();
    expect(rule.for_each).toEqual({
      relay: {
        port: ref('var.relay_port'),
        from: ref('var.gateway_security_group_id'),
        who: 'gateways (mutual TLS)',
      },
      internal: {
        port: ref('var.host_port'),
        from: ref('var.worker_security_group_id'),
        who: 'workers (internal API)',
      },
    });
  });
});

describe('mirror: EFS shared by hosts (read-write) and workers (read-only)', async () => {
  const mirror = await loadModule('modules/mirror');

  it('is encrypted with the platform key, elastic throughput, backed up', () => {
    const fs = only(mirror.resource, 'aws_efs_file_system', 'this');
    expect(fs.encrypted).toBe(true);
    expect(fs.kms_key_id).toBe(ref('var.kms_key_arn'));
    expect(fs.throughput_mode).toBe('elastic');
    const backup = nested(only(mirror.resource, 'aws_efs_backup_policy', 'this'), 'backup_policy');
    expect(backup.status).toBe('ENABLED');
  });

  it('lets workers mount without ClientWrite and refuses connections without TLS', () => {
    const policy = only(mirror.data, 'aws_iam_policy_document', 'file_system');
    const statements = policy.statement as Block[];
    const workers = statements.find((s) => s.sid === 'WorkersMountReadOnly');
    expect(workers?.actions).toEqual(['elasticfilesystem:ClientMount']);
    const tls = statements.find((s) => s.sid === 'TlsOnly');
    expect(tls?.effect).toBe('Deny');
    expect(nested(tls as Block, 'condition')).toMatchObject({
      variable: 'aws:SecureTransport',
      values: ['false'],
    });
  });
});

describe('control: RDS PostgreSQL', async () => {
  const control = await loadModule('modules/control');
  const deployment = await loadModule('modules/deployment');
  const db = only(control.resource, 'aws_db_instance', 'this');

  it('is always encrypted, private, with its password managed in Secrets Manager', () => {
    expect(db.storage_encrypted).toBe(true);
    expect(db.publicly_accessible).toBe(false);
    expect(db.manage_master_user_password).toBe(true);
    expect(db.password).toBeUndefined();
    expect(db.skip_final_snapshot).toBe(false);
  });

  it('forces TLS', () => {
    const group = only(control.resource, 'aws_db_parameter_group', 'this');
    expect(group.parameter).toContainEqual({ name: 'rds.force_ssl', value: '1' });
  });

  it('takes Multi-AZ and deletion protection from the sizing profile (prod: both on, proved by tofu test)', () => {
    expect(db.multi_az).toBe(ref('var.multi_az'));
    expect(db.deletion_protection).toBe(ref('var.deletion_protection'));
    const call = single(deployment.module, 'control');
    expect(call.multi_az).toBe(ref('module.sizing.control.multi_az'));
    expect(call.deletion_protection).toBe(ref('module.sizing.control.deletion_protection'));
  });
});

describe('storage: buckets and keys', async () => {
  const storage = await loadModule('modules/storage');
  const bucket = await loadModule('modules/bucket');
  const call = (name: string) => single(storage.module, name);

  it('has the backups, releases and logs buckets, all through the bucket module', () => {
    expect(Object.keys(storage.module).sort()).toEqual(['backups', 'logs', 'releases']);
    for (const name of ['backups', 'logs', 'releases']) expect(call(name).source).toBe('../bucket');
    expect(storage.resource.aws_s3_bucket).toBeUndefined();
  });

  it('encrypts backups with their own KMS key (SSE-KMS) and refuses any other key', () => {
    expect(call('backups').kms_key_arn).toBe(ref('aws_kms_key.this["backups"].arn'));
    expect(call('backups').require_kms_key).toBe(true);
    expect(call('releases').kms_key_arn).toBe(ref('aws_kms_key.this["platform"].arn'));
    const sse = nested(
      nested(only(bucket.resource, 'aws_s3_bucket_server_side_encryption_configuration', 'this'), 'rule'),
      'apply_server_side_encryption_by_default',
    );
    expect(sse.sse_algorithm).toBe(ref('var.kms_key_arn == null ? "AES256" : "aws:kms"'));
    const policy = only(bucket.data, 'aws_iam_policy_document', 'this');
    expect(JSON.stringify(policy)).toContain('s3:x-amz-server-side-encryption-aws-kms-key-id');
  });

  it('logs access to the backups and releases buckets', () => {
    expect(call('backups').access_log_bucket).toBe(ref('module.logs.id'));
    expect(call('releases').access_log_bucket).toBe(ref('module.logs.id'));
  });

  it('versions every bucket and closes it to the public', () => {
    const versioning = only(bucket.resource, 'aws_s3_bucket_versioning', 'this');
    expect(nested(versioning, 'versioning_configuration').status).toBe('Enabled');
    const block = only(bucket.resource, 'aws_s3_bucket_public_access_block', 'this');
    for (const key of [
      'block_public_acls',
      'block_public_policy',
      'ignore_public_acls',
      'restrict_public_buckets',
    ])
      expect(block[key], key).toBe(true);
    const ownership = nested(only(bucket.resource, 'aws_s3_bucket_ownership_controls', 'this'), 'rule');
    expect(ownership.object_ownership).toBe('BucketOwnerEnforced');
  });

  it('denies every request without TLS', () => {
    const policy = only(bucket.data, 'aws_iam_policy_document', 'this');
    const tls = (policy.statement as Block[]).find((s) => s.sid === 'TlsOnly');
    expect(tls?.effect).toBe('Deny');
    expect(nested(tls as Block, 'condition')).toMatchObject({
      variable: 'aws:SecureTransport',
      values: ['false'],
    });
  });

  it('expires old versions and abandoned uploads, and archives backups', () => {
    const rule = nested(only(bucket.resource, 'aws_s3_bucket_lifecycle_configuration', 'this'), 'rule');
    expect(rule.status).toBe('Enabled');
    expect(nested(rule, 'abort_incomplete_multipart_upload').days_after_initiation).toBe(7);
    expect(nested(rule, 'noncurrent_version_expiration').noncurrent_days).toBe(
      ref('var.noncurrent_version_days'),
    );
    expect(call('backups').noncurrent_version_days).toBe(ref('var.backup_retention_days'));
    expect(call('backups').archive_after_days).toBe(ref('var.backup_archive_after_days'));
  });

  it('rotates its keys', () => {
    const keys = only(storage.resource, 'aws_kms_key', 'this');
    expect(keys.for_each).toBe(ref('local.kms_keys'));
    expect(Object.keys(locals(storage).kms_keys as Block).sort()).toEqual(['backups', 'platform']);
    expect(keys.enable_key_rotation).toBe(true);
  });
});

describe('iam: the roles carry exactly the documents iam-policies proves', async () => {
  const iam = await loadModule('modules/iam');

  it('attaches each role only the policy built by iam-policies', () => {
    const policy = only(iam.resource, 'aws_iam_role_policy', 'node');
    expect(policy.policy).toBe(ref('var.policies[each.key]'));
    expect(Object.keys(iam.resource.aws_iam_role_policy ?? {})).toEqual(['node']);
    expect(Object.keys(iam.resource.aws_iam_policy ?? {})).toEqual([]);
  });

  it('creates the role secrets without values (an operator puts them; the state holds none)', () => {
    expect(iam.resource.aws_secretsmanager_secret_version).toBeUndefined();
  });
});

describe('network: three tiers', async () => {
  const network = await loadModule('modules/network');

  it('gives the database subnets no route out', () => {
    const routes = Object.values(network.resource.aws_route ?? {}).flat();
    for (const route of routes) expect(String(route.route_table_id)).not.toContain('database');
  });

  it('reaches AWS services through endpoints, S3 through a gateway endpoint', () => {
    expect(only(network.resource, 'aws_vpc_endpoint', 's3').vpc_endpoint_type).toBe('Gateway');
    const defaults = single(network.variable, 'interface_endpoints').default as string[];
    expect(defaults).toEqual(
      expect.arrayContaining(['secretsmanager', 'logs', 'elasticfilesystem', 'autoscaling']),
    );
  });

  it('closes the default security group and logs every flow', () => {
    const closed = only(network.resource, 'aws_default_security_group', 'this');
    expect(closed.ingress).toBeUndefined();
    expect(closed.egress).toBeUndefined();
    expect(only(network.resource, 'aws_flow_log', 'this').traffic_type).toBe('ALL');
  });
});

describe('deployment: the fleets run what node-config renders, sized by sizing', async () => {
  const deployment = await loadModule('modules/deployment');
  const call = (name: string) => single(deployment.module, name);

  it('gives each fleet the user data of its role', () => {
    expect(call('gateway').user_data).toBe(ref('module.gateway_config.user_data'));
    expect(call('host').user_data).toBe(ref('module.host_config.user_data'));
    expect(call('worker').user_data).toBe(ref('module.worker_config.user_data'));
    expect(call('gateway_config').role).toBe('gateway');
    expect(call('host_config').role).toBe('host');
    expect(call('worker_config').role).toBe('worker');
  });

  it('takes every instance type and count from the sizing module', () => {
    for (const fleet of ['gateway', 'host', 'worker']) {
      expect(call(fleet).instance_type).toBe(ref(`module.sizing.${fleet}.instance_type`));
      expect(call(fleet).min_size).toBe(ref(`module.sizing.${fleet}.min`));
    }
    expect(call('host_config').host_capacity).toBe(ref('module.sizing.host.capacity'));
  });

  it('runs the workers as the fleet module alone, reaching the internal API of the hosts', () => {
    expect(call('worker').source).toBe('../fleet');
    expect(call('worker').egress_ports_in_vpc).toEqual({
      endpoints: 443,
      database: 5432,
      mirror: 2049,
      hosts: ref('module.host.host_port'),
    });
  });

  it('builds the roles from the proven policy documents', () => {
    expect(call('iam').policies).toBe(ref('module.iam_policies.policies'));
  });

  it('protects the load balancer from deletion in prod', () => {
    expect(call('gateway').deletion_protection).toBe(ref('var.environment == "prod"'));
  });
});

describe('observability: logs, metrics and alarms', async () => {
  const observability = await loadModule('modules/observability');
  const alarms = locals(observability).cloudwatch_alarms as Record<string, Block>;

  it('alarms on unhealthy gateways behind the load balancer', () => {
    expect(alarms['gateway-unhealthy']).toMatchObject({
      namespace: 'AWS/NetworkELB',
      metric: 'UnHealthyHostCount',
      comparison: 'GreaterThanThreshold',
      threshold: 0,
    });
  });

  it('alarms on the control store (CPU, storage, memory)', () => {
    for (const name of ['control-cpu', 'control-free-storage', 'control-memory'])
      expect(alarms[name]?.namespace, name).toBe('AWS/RDS');
  });

  it('notifies one encrypted topic, and encrypts every log group', () => {
    const alarm = only(observability.resource, 'aws_cloudwatch_metric_alarm', 'this');
    expect(alarm.alarm_actions).toEqual([ref('aws_sns_topic.alarms.arn')]);
    expect(only(observability.resource, 'aws_sns_topic', 'alarms').kms_master_key_id).toBe(
      ref('var.kms_key_arn'),
    );
    for (const group of ['node', 'prometheus'])
      expect(only(observability.resource, 'aws_cloudwatch_log_group', group).kms_key_id).toBe(
        ref('var.kms_key_arn'),
      );
  });

  it("alarms on Rookery's own metrics, among them the mirror's lag", () => {
    const rules = only(observability.resource, 'aws_prometheus_rule_group_namespace', 'rookery');
    const data = String(rules.data);
    for (const alert of ['RookeryMirrorLag', 'RookeryTenantCrashLoop', 'RookeryBackupJobsFailing'])
      expect(data).toContain(alert);
    // The lag alarm watches the host's worst tenant, over the variable's threshold, only where tenants mirror.
    expect(data).toMatch(
      /max by \(instance\) \(rookery_host_tenant_mirror_lag_seconds\) > \$\{var\.mirror_lag_alarm_seconds\} and on \(instance\) rookery_host_tenants_mirrored > 0/,
    );
  });

  it('names in its rules only metrics a service exports (an alarm on a missing metric never fires)', () => {
    const rules = only(observability.resource, 'aws_prometheus_rule_group_namespace', 'rookery');
    const named = new Set(String(rules.data).match(/\brookery_[a-z0-9_]+/g));
    expect(named.size).toBeGreaterThan(0);
    const exported = exportedMetricNames();
    expect([...named].filter((name) => !exported.has(name))).toEqual([]);
  });
});
