variable "name" {
  description = "The group's name (e.g. rookery-prod-host)."
  type        = string
}

variable "image_id" {
  description = "The AMI (Amazon Linux 2023: cloud-init, the AWS CLI, dnf for jq, amazon-efs-utils, mdadm)."
  type        = string
}

variable "instance_type" {
  description = "The instance type."
  type        = string
}

variable "subnet_ids" {
  description = "The private subnets the group spreads over."
  type        = list(string)
}

variable "vpc_id" {
  description = "The VPC."
  type        = string
}

variable "vpc_cidr_block" {
  description = "The VPC's block: egress stays inside it (and S3's prefix list)."
  type        = string
}

variable "s3_prefix_list_id" {
  description = "The S3 gateway endpoint's prefix list (the release at boot; backups on workers)."
  type        = string
}

variable "egress_ports_in_vpc" {
  description = "TCP ports the nodes reach inside the VPC, by purpose (443: the interface endpoints; 5432: the control store; 2049: the mirror; the hosts' port)."
  type        = map(number)
}

variable "instance_profile_arn" {
  description = "The instance profile of the role's IAM role."
  type        = string
}

variable "user_data" {
  description = "The cloud-init user data from the node-config module (no secrets)."
  type        = string
}

variable "min_size" {
  description = "Smallest group size."
  type        = number
}

variable "max_size" {
  description = "Largest group size."
  type        = number
}

variable "desired_capacity" {
  description = "Initial group size (later owned by scaling policies or operators)."
  type        = number
}

variable "target_group_arns" {
  description = "Load balancer target groups the instances join."
  type        = list(string)
  default     = []
}

variable "health_check_type" {
  description = "EC2, or ELB for groups behind a load balancer."
  type        = string
  default     = "EC2"
}

variable "root_volume_gb" {
  description = "The root volume's size (encrypted gp3); data lives elsewhere."
  type        = number
  default     = 30
}

variable "kms_key_arn" {
  description = "The KMS key the root volumes are encrypted with."
  type        = string
}

variable "initial_lifecycle_hooks" {
  description = "Lifecycle hooks present from the group's creation (the host's drain on termination)."
  type = list(object({
    name                 = string
    lifecycle_transition = string
    heartbeat_timeout    = number
    default_result       = string
  }))
  default = []
}

variable "instance_refresh_min_healthy_percentage" {
  description = "A rolling upgrade (a new launch template version) keeps at least this share of the group in service."
  type        = number
  default     = 90
}

variable "tags" {
  description = "Tags on every resource and on the instances."
  type        = map(string)
  default     = {}
}
