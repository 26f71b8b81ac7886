output "zones" {
  description = "Availability zones the fleets spread over."
  value       = local.profile.zones
}

output "host" {
  description = "The host fleet: instance type, counts, and the capacity each host registers (ROOKERY_HOST_CAPACITY)."
  value = {
    instance_type    = terraform_data.checked.output
    min              = local.hosts
    desired          = local.hosts
    max              = local.hosts * 2
    capacity         = local.placed_per_host
    awake_per_host   = local.awake_per_host
    tenant_memory_mb = var.tenant_memory_mb
  }
}

output "gateway" {
  description = "The gateway fleet."
  value = {
    instance_type = local.profile.gateway_instance_type
    min           = local.profile.gateways
    desired       = local.profile.gateways
    max           = local.profile.gateways * 3
  }
}

output "worker" {
  description = "The worker fleet."
  value = {
    instance_type = local.profile.worker_instance_type
    min           = local.profile.workers
    desired       = local.profile.workers
    max           = local.profile.workers * 4
  }
}

output "control" {
  description = "The control store (RDS PostgreSQL): always encrypted; Multi-AZ and deletion protection per profile."
  value = {
    instance_class        = local.profile.db_instance_class
    multi_az              = local.profile.db_multi_az
    deletion_protection   = local.profile.db_deletion_protect
    storage_encrypted     = true
    backup_retention_days = local.profile.db_backup_days
    allocated_storage_gb  = local.profile.db_storage_gb
  }
}

output "log_retention_days" {
  description = "How long log groups keep what the nodes log."
  value       = local.profile.log_retention_days
}
