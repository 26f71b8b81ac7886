output "gateway_dns_name" {
  description = "Point the public names at this (CNAME or alias)."
  value       = module.gateway.dns_name
}

output "release_bucket" {
  description = "Upload releases to s3://<this>/releases/ (docs/operations.md)."
  value       = module.storage.release_bucket_name
}

output "secret_names" {
  description = "Per role: the Secrets Manager secret an operator fills (docs/operations.md, \"Secrets\")."
  value       = module.iam.secret_names
}

output "autoscaling_groups" {
  description = "Per role: its auto-scaling group (scale and roll upgrades through these)."
  value = {
    gateway = module.gateway.autoscaling_group_name
    host    = module.host.autoscaling_group_name
    worker  = module.worker.autoscaling_group_name
  }
}

output "alarm_topic_arn" {
  description = "Subscribe more receivers to this topic."
  value       = module.observability.alarm_topic_arn
}

output "control_endpoint" {
  description = "The control store's endpoint (private)."
  value       = module.control.endpoint
}
