# What an operator supplies (terraform.tfvars); modules/deployment/variables.tf says what each means.

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
