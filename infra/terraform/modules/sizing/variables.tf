variable "environment" {
  description = "prod, staging or local: picks the profile (redundancy, protection, retention) below."
  type        = string

  validation {
    condition     = contains(["prod", "staging", "local"], var.environment)
    error_message = "The environment is prod, staging or local."
  }
}

variable "tenants" {
  description = "Tenants the fleet must hold (placed, whether awake or asleep)."
  type        = number
  default     = 1000

  validation {
    condition     = var.tenants >= 1 && floor(var.tenants) == var.tenants
    error_message = "The number of tenants is a whole number, at least 1."
  }
}

variable "awake_fraction" {
  description = "The share of a host's tenants awake at once (tenants sleep when idle): placed tenants per host = awake tenants per host / this."
  type        = number
  default     = 0.1

  validation {
    condition     = var.awake_fraction > 0 && var.awake_fraction <= 1
    error_message = "The awake fraction is above 0 and at most 1."
  }
}

variable "tenant_memory_mb" {
  description = "Memory one awake tenant may use (ROOKERY_TENANT_MEMORY_MB, the cgroup's memory.max)."
  type        = number
  default     = 1024

  validation {
    condition     = var.tenant_memory_mb >= 64
    error_message = "A tenant gets at least 64 MiB."
  }
}

variable "host_instance_type" {
  description = "The hosts' instance type; null: the profile's. Hosts keep tenants on instance-store NVMe, so only types with local NVMe are accepted."
  type        = string
  default     = null

  validation {
    condition     = var.host_instance_type == null || can(regex("^(i4i|i4g|i7ie|i8g|im4gn|is4gen|c5d|c6id|c6gd|c7gd|m5d|m6id|m6gd|m7gd|r5d|r6id|r6gd|r7gd|x2idn)\\.", var.host_instance_type))
    error_message = "Hosts need instance-store NVMe: pick an i4i, i4g, i7ie, i8g, im4gn, is4gen, c5d, c6id, c6gd, c7gd, m5d, m6id, m6gd, m7gd, r5d, r6id, r6gd, r7gd or x2idn type."
  }
}
