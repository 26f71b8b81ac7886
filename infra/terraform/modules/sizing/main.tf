# Sizing rules: how many of each node, of which type, and what the environment's profile demands.
# No provider: `tofu test` checks the arithmetic and the policy here.

locals {
  # Memory (MiB) of the instance types the profiles use or an operator may pick; the host's own
  # processes and the page cache keep host_reserved_mb of it.
  memory_mb = {
    "i4i.large"  = 16384, "i4i.xlarge" = 32768, "i4i.2xlarge" = 65536, "i4i.4xlarge" = 131072,
    "i4g.large"  = 16384, "i4g.xlarge" = 32768, "i4g.2xlarge" = 65536,
    "m6id.large" = 8192, "m6id.xlarge" = 16384, "m6id.2xlarge" = 32768,
    "r6id.large" = 16384, "r6id.xlarge" = 32768, "r6id.2xlarge" = 65536,
    "m7gd.large" = 8192, "m7gd.xlarge" = 16384, "r7gd.large" = 16384, "r7gd.xlarge" = 32768,
  }
  host_reserved_mb = 2048

  profiles = {
    prod = {
      zones                 = 3
      host_instance_type    = "i4i.xlarge"
      gateway_instance_type = "c7g.large"
      gateways              = 3
      worker_instance_type  = "m7g.large"
      workers               = 2
      db_instance_class     = "db.r7g.large"
      db_multi_az           = true
      db_deletion_protect   = true
      db_backup_days        = 14
      db_storage_gb         = 100
      log_retention_days    = 90
    }
    staging = {
      zones                 = 3
      host_instance_type    = "m6id.large"
      gateway_instance_type = "t4g.small"
      gateways              = 2
      worker_instance_type  = "t4g.medium"
      workers               = 1
      db_instance_class     = "db.t4g.medium"
      db_multi_az           = false
      db_deletion_protect   = false
      db_backup_days        = 3
      db_storage_gb         = 20
      log_retention_days    = 14
    }
    local = {
      zones                 = 1
      host_instance_type    = "m6id.large"
      gateway_instance_type = "local"
      gateways              = 2
      worker_instance_type  = "local"
      workers               = 1
      db_instance_class     = "local"
      db_multi_az           = false
      db_deletion_protect   = false
      db_backup_days        = 0
      db_storage_gb         = 0
      log_retention_days    = 0
    }
  }
  profile = local.profiles[var.environment]

  host_instance_type = coalesce(var.host_instance_type, local.profile.host_instance_type)
  host_memory_mb     = lookup(local.memory_mb, local.host_instance_type, 0)

  awake_per_host  = floor((local.host_memory_mb - local.host_reserved_mb) / var.tenant_memory_mb)
  placed_per_host = max(1, floor(local.awake_per_host / var.awake_fraction))
  # Enough hosts for every tenant with one host lost (N+1, so a failover has room to land), and at
  # least three: the reaper does nothing when most hosts' leases expire at once, which needs a
  # majority to mean something; in prod at least one per zone.
  hosts_needed = ceil(var.tenants / local.placed_per_host) + 1
  hosts        = max(3, local.profile.zones, local.hosts_needed)
}

resource "terraform_data" "checked" {
  input = local.host_instance_type

  lifecycle {
    precondition {
      condition     = local.host_memory_mb > 0
      error_message = "The sizing module does not know the memory of ${local.host_instance_type}: add it to local.memory_mb."
    }
    precondition {
      condition     = local.awake_per_host >= 1
      error_message = "A ${local.host_instance_type} host cannot hold one awake tenant of ${var.tenant_memory_mb} MiB beside its ${local.host_reserved_mb} MiB reserve."
    }
  }
}
