variable "name" {
  description = "Name prefix (e.g. rookery-prod)."
  type        = string
}

variable "log_retention_days" {
  description = "How long the nodes' logs are kept (sizing module)."
  type        = number
}

variable "kms_key_arn" {
  description = "The platform key: log groups and the alarm topic are encrypted with it."
  type        = string
}

variable "alarm_emails" {
  description = "Who the alarms mail (each confirms the subscription once)."
  type        = list(string)
  default     = []
}

variable "load_balancer_arn_suffix" {
  description = "The gateways' load balancer (gateway module)."
  type        = string
}

variable "target_group_arn_suffix" {
  description = "The gateways' target group (gateway module)."
  type        = string
}

variable "db_instance_identifier" {
  description = "The control store (control module)."
  type        = string
}

variable "db_free_storage_alarm_bytes" {
  description = "Alarm when the control store has less free storage than this."
  type        = number
  default     = 5368709120
}

variable "mirror_lag_alarm_seconds" {
  description = "Alarm (a Prometheus rule) when a tenant's mirror lags behind its commits by more than this."
  type        = number
  default     = 30
}

variable "tags" {
  description = "Tags on every resource."
  type        = map(string)
  default     = {}
}
