output "role_arns" {
  description = "Per role: its IAM role ARN."
  value       = { for r, role in aws_iam_role.node : r => role.arn }
}

output "instance_profile_arns" {
  description = "Per role: its instance profile ARN."
  value       = { for r, p in aws_iam_instance_profile.node : r => p.arn }
}

output "secret_arns" {
  description = "Per role: the ARN of its secret."
  value       = { for r, s in aws_secretsmanager_secret.node : r => s.arn }
}

output "secret_names" {
  description = "Per role: the name of its secret (what `aws secretsmanager put-secret-value --secret-id` takes)."
  value       = { for r, s in aws_secretsmanager_secret.node : r => s.name }
}

output "rds_monitoring_role_arn" {
  description = "The role RDS Enhanced Monitoring publishes with."
  value       = aws_iam_role.rds_monitoring.arn
}
