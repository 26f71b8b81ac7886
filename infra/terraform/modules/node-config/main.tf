# The configuration a Rookery node runs: its environment file and its systemd unit, rendered from
# inputs only (no provider), so that `tofu test` checks it here, the AWS user data writes exactly
# these files, and the local environment starts a fleet from them.

locals {
  # Every variable each service reads: the ENV_NAMES of services/<role>/src/config.ts (a host also
  # passes the tenant settings of services/host/src/tenant-env.ts on to its tenants). The vitest
  # check in infra/terraform/test compares these lists with the sources, so they cannot drift.
  known_variables = {
    gateway = [
      "ROOKERY_DATA", "ROOKERY_GATEWAY_HOST", "ROOKERY_GATEWAY_PORT", "ROOKERY_GATEWAY_NAMES",
      "ROOKERY_CONTROL_DATABASE_URL", "ROOKERY_HOST_URL", "ROOKERY_INTERNAL_TOKEN", "ROOKERY_LOG_LEVEL",
      "ROOKERY_GATEWAY_HEADERS_TIMEOUT_MS", "ROOKERY_GATEWAY_REQUEST_TIMEOUT_MS",
      "ROOKERY_GATEWAY_KEEPALIVE_TIMEOUT_MS", "ROOKERY_GATEWAY_MAX_SOCKETS_PER_TENANT",
      "ROOKERY_GATEWAY_TENANT_CONNECTIONS", "ROOKERY_GATEWAY_MAX_STREAMS_PER_TENANT",
      "ROOKERY_GATEWAY_MAX_QUERIES_PER_TENANT", "ROOKERY_GATEWAY_MAX_BULK_PER_TENANT",
      "ROOKERY_GATEWAY_TWO_FACTOR_MAX_ATTEMPTS", "ROOKERY_GATEWAY_TWO_FACTOR_WINDOW_SECONDS",
      "ROOKERY_GATEWAY_ROUTING", "ROOKERY_GATEWAY_PLACEMENT_CACHE_MS", "ROOKERY_GATEWAY_RELAY_TIMEOUT_MS",
      "ROOKERY_GATEWAY_SHARE_LIMITS", "ROOKERY_GATEWAY_HEARTBEAT_MS", "ROOKERY_GATEWAY_HEARTBEAT_TTL_MS",
      "ROOKERY_CONSOLE_DIR", "ROOKERY_GATEWAY_HEALTH_PORT", "ROOKERY_RAVEN_TCP_PORT",
      "ROOKERY_RAVEN_TCP_NEGOTIATION_TIMEOUT_MS", "ROOKERY_GATEWAY_QUEUE_WAIT_MS",
      "ROOKERY_GATEWAY_MAX_QUEUED_PER_TENANT",
    ]
    host = [
      "ROOKERY_DATA", "ROOKERY_HOST_ADDRESS", "ROOKERY_HOST_PORT", "ROOKERY_INTERNAL_TOKEN", "ROOKERY_LOG_LEVEL",
      "ROOKERY_TENANT_LOG_LEVEL", "ROOKERY_START_DEADLINE_MS", "ROOKERY_START_TIMEOUT_MS", "ROOKERY_IDLE_STOP_MS",
      "ROOKERY_STOP_TIMEOUT_MS", "ROOKERY_SHUTDOWN_DEADLINE_MS", "ROOKERY_RESTART_BACKOFF_MS",
      "ROOKERY_RESTART_BACKOFF_MAX_MS", "ROOKERY_MAX_RESTARTS_PER_MINUTE", "ROOKERY_SPARE_PROCESSES",
      "ROOKERY_TENANT_HEAP_MB", "ROOKERY_TENANT_MEMORY_MB", "ROOKERY_TENANT_CPUS", "ROOKERY_CGROUP_ROOT",
      "ROOKERY_TENANT_ENTRY", "ROOKERY_HOST_ID", "ROOKERY_CONTROL_DATABASE_URL", "ROOKERY_HOST_ADVERTISE_URL",
      "ROOKERY_LEASE_TTL_MS", "ROOKERY_HOST_CAPACITY", "ROOKERY_HOST_RELAY_ADDRESS", "ROOKERY_HOST_RELAY_PORT",
      "ROOKERY_HOST_RELAY_NAMES", "ROOKERY_CA_DIR", "ROOKERY_REAPER_INTERVAL_MS", "ROOKERY_REAPER_GRACE_MS",
      "ROOKERY_RELAY_MODE", "ROOKERY_INDEX_WORKER_THRESHOLD",
      # the tenant settings the host passes on
      "ROOKERY_MAX_BODY_BYTES", "ROOKERY_MAX_DOCUMENT_BYTES", "ROOKERY_SYNCHRONOUS",
      "ROOKERY_COMPRESSION_THRESHOLD_BYTES", "ROOKERY_MERGE_TRANSACTIONS", "ROOKERY_MIRROR", "ROOKERY_MIRROR_MODE",
      "ROOKERY_MIRROR_DATABASES", "ROOKERY_MIRROR_SNAPSHOT_MB", "ROOKERY_MIRROR_SNAPSHOT_MINUTES",
      "ROOKERY_MIRROR_RETENTION_HOURS", "ROOKERY_MIRROR_MAX_LAG_MS", "ROOKERY_MIRROR_CONFIRM_TIMEOUT_MS",
      "ROOKERY_INDEX_MAX_PER_DATABASE", "ROOKERY_INDEX_SANDBOX_BUDGET_MB", "ROOKERY_INDEX_SANDBOX_MEMORY_MB",
      "ROOKERY_INDEX_DOCUMENT_TIMEOUT_MS", "ROOKERY_INDEX_BATCH_TIME_MS", "ROOKERY_INDEX_MAX_ENTRIES_PER_DOCUMENT",
      "ROOKERY_INDEXER_REQUEST_TIMEOUT_MS",
    ]
    worker = [
      "ROOKERY_DATA", "ROOKERY_CONTROL_DATABASE_URL", "ROOKERY_MIRROR", "ROOKERY_BACKUP_DIR", "ROOKERY_BACKUP_S3_URL",
      "ROOKERY_BACKUP_S3_ENDPOINT", "ROOKERY_BACKUP_S3_REGION", "ROOKERY_TENANTS_DIR", "ROOKERY_WORKER_SCRATCH",
      "ROOKERY_MASTER_KEY_FILE", "ROOKERY_WORKER_HOST", "ROOKERY_WORKER_PORT", "ROOKERY_LOG_LEVEL",
      "ROOKERY_WORKER_CONCURRENCY", "ROOKERY_WORKER_TENANT_CONCURRENCY", "ROOKERY_WORKER_POLL_MS",
      "ROOKERY_BACKUP_COMPRESSION_LEVEL", "ROOKERY_BACKUP_MAX_MB_PER_S", "ROOKERY_BACKUP_MAX_CHAIN",
      "ROOKERY_BACKUP_EVERY_MINUTES", "ROOKERY_BACKUP_FULL_EVERY_HOURS", "ROOKERY_BACKUP_SCHEDULE_FILE",
      "ROOKERY_BACKUP_SCHEDULER_TICK_MS", "ROOKERY_HOST_URL", "ROOKERY_INTERNAL_TOKEN", "ROOKERY_SWEEP_EVERY_MINUTES",
      "ROOKERY_INDEX_BUILD_MAX_DOCS_PER_S", "ROOKERY_INDEX_BUILD_BATCH",
    ]
  }

  # Read by every role from the secrets file (Secrets Manager at boot; the test harness locally).
  secret_variables = {
    gateway = ["ROOKERY_CONTROL_DATABASE_URL", "ROOKERY_INTERNAL_TOKEN"]
    host    = ["ROOKERY_CONTROL_DATABASE_URL", "ROOKERY_INTERNAL_TOKEN"]
    worker  = ["ROOKERY_CONTROL_DATABASE_URL", "ROOKERY_INTERNAL_TOKEN"]
  }

  # The files each role reads under its data directory that must be the fleet's own, never made per node:
  # the CA (@rookery/control-store's controlPaths(ROOKERY_DATA).certificateAuthority, pki's ca.crt and ca.key:
  # gateways trust client certificates by it and issue their server and relay-client certificates from it,
  # hosts their relay certificates) and the master key (controlPaths' masterKey: gateways seal TOTP secrets
  # with it, workers derive backup keys from it). A gateway that finds none makes a CA and a master key of
  # its own and trusts no certificate the fleet issued, so they are the `files` of the role's secret and the
  # boot script refuses to finish without them. Names are relative to the data directory.
  secret_files = {
    gateway = ["control/ca/ca.crt", "control/ca/ca.key", "control/master.key"]
    host    = ["control/ca/ca.crt", "control/ca/ca.key"]
    worker  = ["control/master.key"]
  }

  # Known only per instance: rendered into one file per host when the ids are given, else written at boot.
  instance_variables = {
    gateway = []
    host    = ["ROOKERY_HOST_ID", "ROOKERY_HOST_ADVERTISE_URL", "ROOKERY_HOST_RELAY_NAMES"]
    worker  = []
  }

  default_port = { gateway = 8443, host = 8081, worker = 8082 }
  port         = coalesce(var.port, local.default_port[var.role])

  # What each role needs set, beyond the services' one-machine defaults.
  role_environment = {
    gateway = merge(
      {
        ROOKERY_GATEWAY_HOST  = var.listen_address
        ROOKERY_GATEWAY_PORT  = tostring(local.port)
        ROOKERY_GATEWAY_NAMES = join(",", var.server_names)
        # A fleet's gateways route by the control store's placements, through the hosts' relays; only a
        # gateway given one host's URL speaks to that host alone (one machine).
        ROOKERY_GATEWAY_ROUTING = var.host_url == null ? "fleet" : "local"
      },
      var.host_url == null ? {} : { ROOKERY_HOST_URL = var.host_url },
      var.health_port == null ? {} : { ROOKERY_GATEWAY_HEALTH_PORT = tostring(var.health_port) },
      # The official RavenDB client's subscription worker speaks RavenDB's TCP protocol on this port.
      { ROOKERY_RAVEN_TCP_PORT = var.raven_tcp_port == null ? "off" : tostring(var.raven_tcp_port) },
    )
    host = {
      ROOKERY_HOST_ADDRESS       = var.listen_address
      ROOKERY_HOST_PORT          = tostring(local.port)
      ROOKERY_HOST_RELAY_ADDRESS = var.listen_address
      ROOKERY_HOST_RELAY_PORT    = tostring(var.relay_port)
      ROOKERY_MIRROR             = var.mirror_dir
      ROOKERY_LEASE_TTL_MS       = tostring(var.lease_ttl_ms)
      ROOKERY_HOST_CAPACITY      = tostring(var.host_capacity)
    }
    worker = merge(
      {
        ROOKERY_WORKER_HOST      = var.listen_address
        ROOKERY_WORKER_PORT      = tostring(local.port)
        ROOKERY_MIRROR           = var.mirror_dir
        ROOKERY_BACKUP_S3_REGION = try(var.boot.region, var.region)
      },
      var.host_url == null ? {} : { ROOKERY_HOST_URL = var.host_url },
      var.backup_s3_url == null ? {} : { ROOKERY_BACKUP_S3_URL = var.backup_s3_url },
    )
  }

  environment = merge(
    { ROOKERY_DATA = var.data_dir, ROOKERY_LOG_LEVEL = var.log_level },
    local.role_environment[var.role],
    var.settings,
  )

  unknown_settings = setsubtract(keys(local.environment), local.known_variables[var.role])
  misplaced        = setintersection(keys(var.settings), local.instance_variables[var.role])

  env_file_path = "${var.config_dir}/${var.role}.env"
  env_file = join("", [
    "# Rookery ${var.role}: rendered by infra/terraform/modules/node-config. Secrets are not here:\n",
    "# ${join(", ", local.secret_variables[var.role])} come from ${var.secrets_env_file}.\n",
    join("", [for name in sort(keys(local.environment)) : "${name}=${local.environment[name]}\n"]),
  ])

  instance_files = {
    for h in var.hosts : "${var.role}-${h.id}" => join("", [
      "ROOKERY_HOST_ID=${h.id}\n",
      "ROOKERY_HOST_ADVERTISE_URL=${h.advertise_url}\n",
      "ROOKERY_HOST_RELAY_NAMES=${h.relay_name}\n",
    ])
  }

  writable_paths = var.role == "host" ? [var.data_dir, var.mirror_dir] : [var.data_dir]
  # A host stops its tenants gracefully on SIGTERM; systemd must wait for that before it kills.
  stop_timeout_s = var.role == "host" ? ceil(tonumber(lookup(var.settings, "ROOKERY_SHUTDOWN_DEADLINE_MS", "12000")) / 1000) + 10 : 30

  # The unit runs Node with the flags of scripts/lib/services.mjs's SERVICE_NODE_FLAGS (what `npm start` and
  # the tests run; test/src/config-drift.test.ts compares them): isolated-vm, the index sandbox, needs
  # --no-node-snapshot. Only hosts read an instance file (their id and address, written at boot).
  unit_name = "rookery-${var.role}.service"
  unit = templatefile("${path.module}/unit.service.tftpl", {
    role              = var.role
    description       = { gateway = "Rookery gateway (public HTTPS, mutual TLS)", host = "Rookery host (tenant processes on local NVMe)", worker = "Rookery worker (backups, restores, sweeps)" }[var.role]
    user              = var.user
    install_dir       = var.install_dir
    node_binary       = var.node_binary
    env_file          = local.env_file_path
    secrets_env_file  = var.secrets_env_file
    instance_env_file = var.instance_env_file
    mounts            = var.role == "gateway" ? [var.data_dir] : [var.data_dir, var.mirror_dir]
    writable_paths    = local.writable_paths
    read_only_paths   = var.role == "worker" ? [var.mirror_dir] : []
    stop_timeout_s    = local.stop_timeout_s
    delegate_cgroups  = var.role == "host"
  })
}

# Refuses configuration the service would not read, before anything is written anywhere.
resource "terraform_data" "validated" {
  input = local.env_file

  lifecycle {
    precondition {
      condition     = length(local.unknown_settings) == 0
      error_message = "Settings the ${var.role} does not read (see services/${var.role}/src/config.ts): ${join(", ", sort(local.unknown_settings))}."
    }
    precondition {
      condition     = length(local.misplaced) == 0
      error_message = "ROOKERY_HOST_ID, ROOKERY_HOST_ADVERTISE_URL and ROOKERY_HOST_RELAY_NAMES are per instance: give them through var.hosts (or the boot script), not settings."
    }
    precondition {
      condition     = var.role != "gateway" || length(var.server_names) > 0
      error_message = "A gateway needs the names its server certificate is issued for (server_names)."
    }
    precondition {
      condition     = length(var.hosts) == 0 || var.role == "host"
      error_message = "Only a host takes per-host ids (hosts)."
    }
  }
}
