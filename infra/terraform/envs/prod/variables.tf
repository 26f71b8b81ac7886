variable "region" {
  description = "The AWS region."
  type        = string
}

variable "azs" {
  description = "Availability zones in the region."
  type        = list(string)
}

variable "image_id" {
  description = "The Amazon Linux 2023 AMI the nodes boot."
  type        = string
}

variable "public_names" {
  description = "The names clients use to reach Rookery."
  type        = list(string)
}

variable "release" {
  description = "The release to run (docs/operations.md, \"Upload a release\")."
  type = object({
    artifact_key    = string
    artifact_sha256 = string
    node_key        = string
    node_sha256     = string
  })
}

variable "tenants" {
  description = "Tenants the fleet must hold."
  type        = number
  default     = 1000
}

variable "host_instance_type" {
  description = "Override the profile's host type (NVMe families only)."
  type        = string
  default     = null
}

variable "alarm_emails" {
  description = "Who the alarms mail."
  type        = list(string)
  default     = []
}

variable "allowed_cidrs" {
  description = "Client networks allowed to reach the gateways."
  type        = list(string)
  default     = ["0.0.0.0/0"]
}
