variable "name" {
  description = "Name prefix (e.g. rookery-prod)."
  type        = string
}

variable "vpc_id" {
  description = "The VPC."
  type        = string
}

variable "vpc_cidr_block" {
  description = "The VPC's block: the gateways' egress to hosts, the database and the endpoints stays inside it."
  type        = string
}

variable "s3_prefix_list_id" {
  description = "The S3 gateway endpoint's prefix list (boot: the release)."
  type        = string
}

variable "public_subnets" {
  description = "Subnets of the load balancer."
  type        = list(string)
}

variable "private_subnets" {
  description = "Subnets of the gateways."
  type        = list(string)
}

variable "internal" {
  description = "An internal load balancer (reachable from inside the VPC or peered networks only)."
  type        = bool
  default     = false
}

variable "allowed_cidrs" {
  description = "Client networks allowed to reach the gateways (mutual TLS is the real door; this narrows who may knock)."
  type        = list(string)
  default     = ["0.0.0.0/0"]
}

variable "gateway_port" {
  description = "The gateways' HTTPS port (ROOKERY_GATEWAY_PORT); the load balancer listens on 443 and passes TCP through to it."
  type        = number
  default     = 8443
}

variable "health_check_port" {
  description = "The gateways' health port (ROOKERY_GATEWAY_HEALTH_PORT, node-config's health_port): the load balancer asks GET /healthz over HTTP there, 200 while a gateway serves, 503 once it stops."
  type        = number
  default     = 8444
}

variable "raven_tcp_port" {
  description = "The gateways' RavenDB TCP port (ROOKERY_RAVEN_TCP_PORT, node-config's raven_tcp_port): the load balancer listens on the same port and passes TCP through, since the gateway names its own port to the client. Null: no listener."
  type        = number
  default     = 38888
}

variable "host_relay_port" {
  description = "The hosts' relay port (ROOKERY_HOST_RELAY_PORT): gateways reach tenants through it over mutual TLS."
  type        = number
  default     = 9443
}

variable "image_id" {
  description = "The AMI."
  type        = string
}

variable "instance_type" {
  description = "Gateway instance type (from the sizing module)."
  type        = string
}

variable "min_size" {
  description = "Smallest gateway count."
  type        = number
}

variable "max_size" {
  description = "Largest gateway count."
  type        = number
}

variable "desired_capacity" {
  description = "Initial gateway count."
  type        = number
}

variable "instance_profile_arn" {
  description = "The gateway role's instance profile (iam module)."
  type        = string
}

variable "user_data" {
  description = "The gateway's user data (node-config module, role gateway)."
  type        = string
}

variable "kms_key_arn" {
  description = "The platform KMS key (root volumes)."
  type        = string
}

variable "deletion_protection" {
  description = "Protect the load balancer from deletion (prod)."
  type        = bool
  default     = true
}

variable "access_logs_bucket" {
  description = "The bucket the load balancer's access logs go to (storage module's logs bucket)."
  type        = string
}

variable "tags" {
  description = "Tags on every resource."
  type        = map(string)
  default     = {}
}
