output "vpc_id" {
  description = "The VPC."
  value       = aws_vpc.this.id
}

output "vpc_cidr_block" {
  description = "The VPC's IPv4 block."
  value       = aws_vpc.this.cidr_block
}

output "public_subnets" {
  description = "Public subnet ids (the load balancer)."
  value       = aws_subnet.public[*].id
}

output "private_subnets" {
  description = "Private subnet ids (every node, EFS mount targets, endpoints)."
  value       = aws_subnet.private[*].id
}

output "database_subnets" {
  description = "Isolated database subnet ids."
  value       = aws_subnet.database[*].id
}

output "database_subnet_group_name" {
  description = "The RDS subnet group over the database subnets."
  value       = aws_db_subnet_group.database.name
}

output "s3_prefix_list_id" {
  description = "The S3 gateway endpoint's prefix list: nodes' only egress to S3."
  value       = aws_vpc_endpoint.s3.prefix_list_id
}
