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
  description = "Worker instance type (sizing module)."
  type        = string
}

variable "host_port" {
  description = "The hosts' internal API port: sweeps and database jobs go through it."
  type        = number
  default     = 8081
}
