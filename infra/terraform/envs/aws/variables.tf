# What an environment is (<env>.tfvars, committed) and what an operator supplies (<env>.operator.tfvars);
# modules/deployment/variables.tf says what each means.

variable "environment" {
  description = "prod or staging (<env>.tfvars): the sizing profile, and part of every name."
  type        = string
}

variable "tenants" {
  description = "Tenants the environment's fleet must hold (<env>.tfvars; modules/sizing turns it into hosts)."
  type        = number
}

variable "host_instance_type" {
  description = "A host instance type other than the profile's (NVMe families only); null: the profile's."
  type        = string
  default     = null
}

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
  type        = any
}

variable "alarm_emails" {
  description = "Who the alarms mail."
  type        = list(string)
}
