output "id" {
  description = "The bucket's name."
  value       = aws_s3_bucket.this.id
}

output "arn" {
  description = "The bucket's ARN."
  value       = aws_s3_bucket.this.arn
}
