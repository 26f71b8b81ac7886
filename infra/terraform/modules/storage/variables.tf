variable "name" {
  description = "Name prefix (e.g. rookery-prod); bucket names add the account id to be globally unique."
  type        = string
}

variable "backup_retention_days" {
  description = "Noncurrent (replaced or deleted) backup objects are kept this long, then expire."
  type        = number
  default     = 35
}

variable "backup_archive_after_days" {
  description = "Backups move to Glacier Instant Retrieval after this many days."
  type        = number
  default     = 30
}

variable "log_retention_days" {
  description = "Access logs (S3, the load balancer) expire after this many days."
  type        = number
  default     = 365
}

variable "tags" {
  description = "Tags on every resource."
  type        = map(string)
  default     = {}
}
