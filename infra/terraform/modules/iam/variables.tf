variable "name" {
  description = "Name prefix (e.g. rookery-prod)."
  type        = string
}

variable "policies" {
  description = "Per role (gateway, host, worker): its policy document JSON (iam-policies module)."
  type        = map(string)

  validation {
    condition     = length(setsymmetricdifference(keys(var.policies), ["gateway", "host", "worker"])) == 0
    error_message = "Give exactly the gateway, host and worker policies."
  }
}

variable "assume_role_policy" {
  description = "The nodes' trust policy (iam-policies module)."
  type        = string
}

variable "kms_key_arn" {
  description = "The platform key the role secrets are encrypted with."
  type        = string
}

variable "tags" {
  description = "Tags on every resource."
  type        = map(string)
  default     = {}
}
