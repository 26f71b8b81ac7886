variable "name" {
  description = "Name prefix of every resource (e.g. rookery-prod)."
  type        = string
}

variable "cidr" {
  description = "The VPC's IPv4 block; subnets are carved from it."
  type        = string
  default     = "10.40.0.0/16"

  validation {
    condition     = can(cidrnetmask(var.cidr)) && tonumber(split("/", var.cidr)[1]) <= 20
    error_message = "The VPC block is an IPv4 CIDR of /20 or larger."
  }
}

variable "azs" {
  description = "Availability zones (three in prod): one subnet of each tier in each."
  type        = list(string)

  validation {
    condition     = length(var.azs) >= 2 && length(var.azs) <= 4
    error_message = "Give two to four availability zones."
  }
}

variable "single_nat_gateway" {
  description = "One NAT gateway for all zones (staging) instead of one per zone (prod)."
  type        = bool
  default     = false
}

variable "interface_endpoints" {
  description = "AWS services reached through interface endpoints in the private subnets, so nodes need no internet for them."
  type        = list(string)
  default     = ["secretsmanager", "logs", "kms", "sts", "autoscaling", "elasticfilesystem", "aps-workspaces", "ssm", "ssmmessages", "ec2messages"]
}

variable "flow_log_retention_days" {
  description = "How long the VPC's flow logs are kept."
  type        = number
  default     = 365
}

variable "kms_key_arn" {
  description = "The KMS key the flow log group is encrypted with."
  type        = string
}

variable "tags" {
  description = "Tags on every resource."
  type        = map(string)
  default     = {}
}
