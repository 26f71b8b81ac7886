variable "role" {
  description = "Which Rookery process the node runs: gateway, host or worker."
  type        = string

  validation {
    condition     = contains(["gateway", "host", "worker"], var.role)
    error_message = "The role is gateway, host or worker."
  }
}

variable "install_dir" {
  description = "Where the release artifact (`pnpm release`) is unpacked; services/<role>/dist/main.js lives under it."
  type        = string
  default     = "/opt/rookery/current"
}

variable "node_binary" {
  description = "The Node 24 binary the unit runs (the user data installs it there)."
  type        = string
  default     = "/opt/node-24/bin/node"
}

variable "data_dir" {
  description = "ROOKERY_DATA: on a host, the striped NVMe array; elsewhere, a small local directory."
  type        = string
  default     = "/var/lib/rookery"
}

variable "mirror_dir" {
  description = "ROOKERY_MIRROR: the shared network disk (EFS) mount, read-write on hosts, read-only on workers. Unused by gateways."
  type        = string
  default     = "/mnt/rookery-mirror"
}

variable "config_dir" {
  description = "Where the rendered environment file is written."
  type        = string
  default     = "/etc/rookery"
}

variable "secrets_env_file" {
  description = "The environment file holding the secret variables, written at boot from Secrets Manager (never rendered here)."
  type        = string
  default     = "/run/rookery/secrets.env"
}

variable "instance_env_file" {
  description = "The environment file of what only the instance knows at boot (the host's id and address)."
  type        = string
  default     = "/run/rookery/instance.env"
}

variable "user" {
  description = "The system user the service runs as."
  type        = string
  default     = "rookery"
}

variable "log_level" {
  description = "ROOKERY_LOG_LEVEL."
  type        = string
  default     = "info"

  validation {
    condition     = contains(["fatal", "error", "warn", "info", "debug", "trace", "silent"], var.log_level)
    error_message = "The log level is one of fatal, error, warn, info, debug, trace, silent."
  }
}

variable "listen_address" {
  description = "The address the role's own port listens on (ROOKERY_GATEWAY_HOST, ROOKERY_HOST_ADDRESS or ROOKERY_WORKER_HOST)."
  type        = string
  default     = "0.0.0.0"
}

variable "port" {
  description = "The role's port: the gateway's HTTPS port, the host's internal API, the worker's /metrics and /healthz. Null: the service's default (8443, 8081, 8082)."
  type        = number
  default     = null

  validation {
    condition     = var.port == null || (var.port >= 1 && var.port <= 65535)
    error_message = "The port is between 1 and 65535."
  }
}

variable "health_port" {
  description = "Gateway only: ROOKERY_GATEWAY_HEALTH_PORT, where its load balancer checks GET /healthz over plain HTTP (200 serving, 503 stopping; services/gateway/README.md, \"Health port\"). Null: none."
  type        = number
  default     = 8444

  validation {
    condition     = var.health_port == null || (var.health_port >= 1 && var.health_port <= 65535)
    error_message = "The health port is between 1 and 65535."
  }
}

variable "raven_tcp_port" {
  description = "Gateway only: ROOKERY_RAVEN_TCP_PORT, the TLS port where the official RavenDB client's subscription worker speaks RavenDB's TCP protocol (services/gateway/README.md). Null: off (the gateway answers GET /info/remote-task/tcp with 501 RavenTcpNotSupported)."
  type        = number
  default     = 38888

  validation {
    condition     = var.raven_tcp_port == null || (var.raven_tcp_port >= 1 && var.raven_tcp_port <= 65535)
    error_message = "The RavenDB TCP port is between 1 and 65535."
  }
}

variable "server_names" {
  description = "Gateway only: the names its server certificate is issued for (ROOKERY_GATEWAY_NAMES)."
  type        = list(string)
  default     = []
}

variable "host_url" {
  description = "Worker: the host's internal API its sweeps go through (ROOKERY_HOST_URL). Gateway: one host to speak to (routing local, one machine); null: the gateway routes by placement (routing fleet)."
  type        = string
  default     = null
}

variable "lease_ttl_ms" {
  description = "Host only: ROOKERY_LEASE_TTL_MS."
  type        = number
  default     = 10000
}

variable "host_capacity" {
  description = "Host only: ROOKERY_HOST_CAPACITY, the most tenants placed on one host (from the sizing module)."
  type        = number
  default     = 1000
}

variable "backup_s3_url" {
  description = "Worker only: s3://bucket/prefix for backups (ROOKERY_BACKUP_S3_URL). Null: backups to a directory under data_dir."
  type        = string
  default     = null
}

variable "region" {
  description = "The AWS region of the backups bucket (ROOKERY_BACKUP_S3_REGION on workers) when there is no var.boot (which names the region)."
  type        = string
  default     = "us-east-1"
}

variable "relay_port" {
  description = "Host only: ROOKERY_HOST_RELAY_PORT, where gateways reach the host's tenants over mutual TLS."
  type        = number
  default     = 9443
}

variable "hosts" {
  description = "Host only, when the ids are known before boot (the local environment): one entry per host with its id, the URL gateways reach its relay at, and the name its relay certificate is issued for. On AWS the user data writes them at boot from the instance metadata instead."
  type = list(object({
    id            = string
    advertise_url = string
    relay_name    = string
  }))
  default = []

  validation {
    condition     = alltrue([for h in var.hosts : can(regex("^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$", h.id))])
    error_message = "A host id is 1 to 100 letters, digits, dots, dashes or underscores, starting with a letter or digit."
  }
}

variable "settings" {
  description = "Further ROOKERY_* settings of the role, by their variable names (the service's config.ts; a host also takes the tenant settings it passes on). Secrets are refused: they reach the node from Secrets Manager."
  type        = map(string)
  default     = {}

  validation {
    condition     = length(setintersection(keys(var.settings), ["ROOKERY_INTERNAL_TOKEN", "ROOKERY_CONTROL_DATABASE_URL"])) == 0
    error_message = "ROOKERY_INTERNAL_TOKEN and ROOKERY_CONTROL_DATABASE_URL are secrets: they come from Secrets Manager at boot, never from rendered configuration."
  }

  validation {
    # systemd's EnvironmentFile and our own parser read KEY=value lines: no quoting, so no room for a
    # value that would need it.
    condition     = alltrue([for v in values(var.settings) : can(regex("^[^\\s\"'\\\\$`]*$", v))])
    error_message = "A setting's value has no whitespace, quotes, backslashes, dollar signs or backticks."
  }

  validation {
    condition     = alltrue([for v in values(var.settings) : !can(regex("://[^/@]*@", v))])
    error_message = "A setting's value holds credentials in a URL (user:password@): put them in Secrets Manager instead."
  }
}

variable "boot" {
  description = <<-EOT
    On AWS: what the instance's user data needs to become this node. Null (the local environment): no user data.
    release_url and node_url are s3:// objects under the release bucket's releases/ prefix (docs/operations.md,
    "Upload a release"); secret_id names the role's Secrets Manager secret ({"env": {...}, "files": {...}});
    database names the RDS-managed credentials secret and the endpoint the control store URL is composed from.
  EOT
  type = object({
    region                 = string
    release_url            = string
    release_sha256         = string
    node_url               = string
    node_sha256            = string
    secret_id              = string
    database_secret_id     = string
    database_endpoint      = string
    database_name          = optional(string, "rookery")
    mirror_file_system_id  = optional(string)
    mirror_access_point_id = optional(string)
    lifecycle_hook_name    = optional(string)
    autoscaling_group_name = optional(string)
  })
  default = null

  validation {
    condition     = var.boot == null || alltrue([for u in [try(var.boot.release_url, ""), try(var.boot.node_url, "")] : can(regex("^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/releases/[A-Za-z0-9._/-]+$", u))])
    error_message = "release_url and node_url are s3://<bucket>/releases/<key> objects."
  }

  validation {
    condition     = var.boot == null || alltrue([for h in [try(var.boot.release_sha256, ""), try(var.boot.node_sha256, "")] : can(regex("^[0-9a-f]{64}$", h))])
    error_message = "release_sha256 and node_sha256 are SHA-256 digests (64 hex digits): the instance refuses what does not match."
  }

  # The user data unpacks node_url as Node itself: it must be Node 24's Linux build (isolated-vm 7 needs 24).
  validation {
    condition     = var.boot == null || can(regex("/node-v24\\.[0-9]+\\.[0-9]+-linux-(arm64|x64)\\.tar\\.xz$", try(var.boot.node_url, "")))
    error_message = "node_url is Node 24's Linux build, .../node-v24.<minor>.<patch>-linux-<arm64|x64>.tar.xz (the services need Node 24)."
  }
}
