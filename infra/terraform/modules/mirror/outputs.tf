output "file_system_id" {
  description = "The mirror's file system."
  value       = aws_efs_file_system.this.id
}

output "file_system_arn" {
  description = "The mirror's file system ARN (iam-policies)."
  value       = aws_efs_file_system.this.arn
}

output "access_point_id" {
  description = "The access point every node mounts through."
  value       = aws_efs_access_point.mirror.id
}
