output "log_group_arns" {
  description = "Per role: its log group ARN (iam-policies)."
  value       = { for r, g in aws_cloudwatch_log_group.node : r => g.arn }
}

output "prometheus_workspace_arn" {
  description = "The metrics workspace (iam-policies)."
  value       = aws_prometheus_workspace.this.arn
}

output "prometheus_remote_write_url" {
  description = "Where the nodes' Prometheus agents write."
  value       = "${aws_prometheus_workspace.this.prometheus_endpoint}api/v1/remote_write"
}

output "alarm_topic_arn" {
  description = "The SNS topic every alarm notifies."
  value       = aws_sns_topic.alarms.arn
}
