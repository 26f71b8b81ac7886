variable "root_dir" {
  description = "An absolute directory for the fleet's data, mirror and rendered files."
  type        = string

  validation {
    condition     = startswith(var.root_dir, "/")
    error_message = "root_dir is an absolute path."
  }
}

variable "repo_dir" {
  description = "The nodes' working directory, as the release directory is on AWS: the unpacked release artifact (`pnpm release`), or the repository with its build."
  type        = string
}

variable "node_binary" {
  description = "Node 24."
  type        = string
}

variable "hosts" {
  description = "How many hosts."
  type        = number
  default     = 3
}

variable "gateways" {
  description = "How many gateways."
  type        = number
  default     = 2
}

variable "tenants" {
  description = "Tenants the local fleet is sized for."
  type        = number
  default     = 10
}

variable "base_port" {
  description = "Ports: hosts base+1.., gateways base+101.., gateways' health checks base+151.., the worker base+201, hosts' relays base+301.., gateways' RavenDB TCP listeners base+401.."
  type        = number
  default     = 19000
}

variable "lease_ttl_ms" {
  description = "Hosts' lease TTL."
  type        = number
  default     = 10000
}
