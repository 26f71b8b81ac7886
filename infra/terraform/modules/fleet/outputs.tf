output "autoscaling_group_name" {
  description = "The group's name."
  value       = aws_autoscaling_group.this.name
}

output "autoscaling_group_arn" {
  description = "The group's ARN."
  value       = aws_autoscaling_group.this.arn
}

output "launch_template_id" {
  description = "The launch template."
  value       = aws_launch_template.this.id
}

output "security_group_id" {
  description = "The nodes' security group: role modules add their ingress to it."
  value       = aws_security_group.this.id
}
