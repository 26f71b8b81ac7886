variable "environment" {
  description = "prod or staging: the sizing profile, and part of every name (rookery-<environment>)."
  type        = string

  validation {
    condition     = contains(["prod", "staging"], var.environment)
    error_message = "A deployment on AWS is prod or staging (local has its own environment)."
  }
}

variable "region" {
  description = "The AWS region."
  type        = string
}

variable "azs" {
  description = "The availability zones (as many as the profile's zones)."
  type        = list(string)
}

variable "vpc_cidr" {
  description = "The VPC's block."
  type        = string
  default     = "10.40.0.0/16"
}

variable "image_id" {
  description = "The AMI every node boots (Amazon Linux 2023, arm64 or x86_64 matching the instance types and the Node build)."
  type        = string
}

variable "public_names" {
  description = "The names clients use (the gateways' server certificate is issued for them)."
  type        = list(string)
}

variable "release" {
  description = "What the nodes run: keys under the releases bucket's releases/ prefix and their SHA-256 (docs/operations.md, \"Upload a release\")."
  type = object({
    artifact_key    = string
    artifact_sha256 = string
    node_key        = string
    node_sha256     = string
  })
}

variable "tenants" {
  description = "Tenants the fleet must hold (sizing)."
  type        = number
  default     = 1000
}

variable "host_instance_type" {
  description = "Override the profile's host type (NVMe families only)."
  type        = string
  default     = null
}

variable "mirror_mode" {
  description = "ROOKERY_MIRROR_MODE for every tenant: sync (acknowledge after the mirror's fsync) or async."
  type        = string
  default     = "sync"
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

variable "tags" {
  description = "Tags on every resource."
  type        = map(string)
  default     = {}
}
