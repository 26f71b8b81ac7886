output "backup_bucket_arn" {
  description = "The backups bucket."
  value       = module.backups.arn
}

output "backup_bucket_name" {
  description = "The backups bucket's name (ROOKERY_BACKUP_S3_URL is s3://<this>/backups)."
  value       = module.backups.id
}

output "release_bucket_arn" {
  description = "The releases bucket."
  value       = module.releases.arn
}

output "release_bucket_name" {
  description = "The releases bucket's name (docs/operations.md, \"Upload a release\")."
  value       = module.releases.id
}

output "logs_bucket_name" {
  description = "The access logs bucket."
  value       = module.logs.id
}

output "backup_kms_key_arn" {
  description = "The backups' key."
  value       = aws_kms_key.this["backups"].arn
}

output "platform_kms_key_arn" {
  description = "The platform key."
  value       = aws_kms_key.this["platform"].arn
}
