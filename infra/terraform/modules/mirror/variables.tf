variable "name" {
  description = "Name prefix (e.g. rookery-prod)."
  type        = string
}

variable "vpc_id" {
  description = "The VPC."
  type        = string
}

variable "private_subnets" {
  description = "One mount target in each (one per zone)."
  type        = list(string)
}

variable "kms_key_arn" {
  description = "The platform KMS key: the mirror is encrypted at rest with it."
  type        = string
}

variable "writer_security_group_id" {
  description = "The hosts' security group (they write the mirror)."
  type        = string
}

variable "reader_security_group_id" {
  description = "The workers' security group (they read it)."
  type        = string
}

variable "writer_role_arn" {
  description = "The hosts' IAM role: may mount and write."
  type        = string
}

variable "reader_role_arn" {
  description = "The workers' IAM role: may mount read-only."
  type        = string
}

variable "uid" {
  description = "The POSIX user the access point maps every client to (the rookery user on the nodes)."
  type        = number
  default     = 990
}

variable "tags" {
  description = "Tags on every resource."
  type        = map(string)
  default     = {}
}
