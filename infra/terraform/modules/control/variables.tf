variable "name" {
  description = "Name prefix (e.g. rookery-prod)."
  type        = string
}

variable "vpc_id" {
  description = "The VPC."
  type        = string
}

variable "database_subnet_group_name" {
  description = "The isolated database subnets' group (network module)."
  type        = string
}

variable "client_security_group_ids" {
  description = "Security groups allowed to connect: gateways, hosts, workers."
  type        = map(string)
}

variable "instance_class" {
  description = "The instance class (sizing module)."
  type        = string
}

variable "engine_version" {
  description = "PostgreSQL's major version."
  type        = string
  default     = "16"
}

variable "allocated_storage_gb" {
  description = "Initial storage; grows on its own up to four times this."
  type        = number
}

variable "multi_az" {
  description = "A standby in another zone (sizing: true in prod)."
  type        = bool
}

variable "deletion_protection" {
  description = "Refuse deletion (sizing: true in prod)."
  type        = bool
}

variable "backup_retention_days" {
  description = "Days of automated backups (point-in-time restore)."
  type        = number
}

variable "kms_key_arn" {
  description = "The platform KMS key: storage, Performance Insights and the master password's secret."
  type        = string
}

variable "monitoring_role_arn" {
  description = "The role Enhanced Monitoring publishes with (iam module)."
  type        = string
}

variable "tags" {
  description = "Tags on every resource."
  type        = map(string)
  default     = {}
}
