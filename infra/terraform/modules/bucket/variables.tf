variable "bucket" {
  description = "The bucket's name."
  type        = string
}

variable "kms_key_arn" {
  description = "The KMS key objects are encrypted with by default (SSE-KMS); null: SSE-S3 (what the load balancer's access logs require)."
  type        = string
  default     = null
}

variable "require_kms_key" {
  description = "Refuse uploads that name another KMS key than kms_key_arn."
  type        = bool
  default     = false
}

variable "access_log_bucket" {
  description = "Where this bucket's access logs go; null: none (the logs bucket itself)."
  type        = string
  default     = null
}

variable "noncurrent_version_days" {
  description = "Replaced or deleted object versions are kept this long."
  type        = number
  default     = 90
}

variable "archive_after_days" {
  description = "Objects move to Glacier Instant Retrieval after this many days; null: never."
  type        = number
  default     = null
}

variable "expire_after_days" {
  description = "Objects expire after this many days; null: never."
  type        = number
  default     = null
}

variable "log_delivery" {
  description = "Allow S3 server access logs and load balancer logs of this account to be written here."
  type        = bool
  default     = false
}

variable "tags" {
  description = "Tags on the bucket."
  type        = map(string)
  default     = {}
}
