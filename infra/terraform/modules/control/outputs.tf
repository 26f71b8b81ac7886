output "endpoint" {
  description = "host:port of the control store."
  value       = aws_db_instance.this.endpoint
}

output "instance_identifier" {
  description = "For CloudWatch alarms."
  value       = aws_db_instance.this.identifier
}

output "master_user_secret_arn" {
  description = "The RDS-managed secret with the master user's name and password."
  value       = aws_db_instance.this.master_user_secret[0].secret_arn
}

output "security_group_id" {
  description = "The control store's security group."
  value       = aws_security_group.this.id
}
