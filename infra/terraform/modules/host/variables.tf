variable "name" {
  description = "Name prefix (e.g. rookery-prod)."
  type        = string
}

variable "vpc_id" {
  description = "The VPC."
  type        = string
}

variable "vpc_cidr_block" {
  description = "The VPC's block (egress stays inside it)."
  type        = string
}

variable "s3_prefix_list_id" {
  description = "The S3 gateway endpoint's prefix list."
  type        = string
}

variable "private_subnets" {
  description = "Subnets of the nodes."
  type        = list(string)
}

variable "image_id" {
  description = "The AMI."
  type        = string
}

variable "min_size" {
  description = "Smallest node count."
  type        = number
}

variable "max_size" {
  description = "Largest node count."
  type        = number
}

variable "desired_capacity" {
  description = "Initial node count."
  type        = number
}

variable "instance_profile_arn" {
  description = "The role's instance profile (iam module)."
  type        = string
}

variable "user_data" {
  description = "The node's user data (node-config module)."
  type        = string
}

variable "kms_key_arn" {
  description = "The platform KMS key (root volumes)."
  type        = string
}

variable "tags" {
  description = "Tags on every resource."
  type        = map(string)
  default     = {}
}

variable "instance_type" {
  description = "Host instance type (sizing module): instance-store NVMe only, striped into the data directory."
  type        = string

  validation {
    condition     = can(regex("^(i4i|i4g|i7ie|i8g|im4gn|is4gen|c5d|c6id|c6gd|c7gd|m5d|m6id|m6gd|m7gd|r5d|r6id|r6gd|r7gd|x2idn)\\.", var.instance_type))
    error_message = "Hosts need an instance type with instance-store NVMe (i4i, i4g, i7ie, i8g, im4gn, is4gen, c5d, c6id, c6gd, c7gd, m5d, m6id, m6gd, m7gd, r5d, r6id, r6gd, r7gd, x2idn)."
  }
}

variable "host_port" {
  description = "The hosts' internal API port (ROOKERY_HOST_PORT)."
  type        = number
  default     = 8081
}

variable "relay_port" {
  description = "The hosts' relay port (ROOKERY_HOST_RELAY_PORT): gateways reach tenants there over mutual TLS."
  type        = number
  default     = 9443
}

variable "gateway_security_group_id" {
  description = "The gateways' security group: allowed to the relay port."
  type        = string
}

variable "worker_security_group_id" {
  description = "The workers' security group: allowed to the internal API (sweeps and database jobs)."
  type        = string
}

variable "drain_timeout_seconds" {
  description = "How long the termination hook waits for a drain (the drain script sends heartbeats every minute; this bounds a silent one)."
  type        = number
  default     = 900
}
