variable "bucket_arns" {
  description = "The S3 buckets (storage module): backups, and releases (its releases/ prefix holds the release artifacts and Node 24, docs/operations.md, \"Upload a release\")."
  type = object({
    backups  = string
    releases = string
  })

  validation {
    condition     = alltrue([for arn in values(var.bucket_arns) : can(regex("^arn:aws[a-z-]*:s3:::[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", arn))])
    error_message = "Each bucket is an S3 bucket ARN (arn:aws:s3:::name)."
  }
}

variable "kms_key_arns" {
  description = "The KMS keys (storage module): backups (SSE-KMS of the backups), and secrets (the Secrets Manager secrets)."
  type = object({
    backups = string
    secrets = string
  })

  validation {
    condition     = alltrue([for arn in values(var.kms_key_arns) : can(regex("^arn:aws[a-z-]*:kms:", arn))])
    error_message = "Each key is a KMS key ARN."
  }
}

variable "mirror_file_system_arn" {
  description = "The EFS file system of the mirror."
  type        = string

  validation {
    condition     = can(regex("^arn:aws[a-z-]*:elasticfilesystem:", var.mirror_file_system_arn))
    error_message = "The mirror is an EFS file system ARN."
  }
}

variable "secret_arns" {
  description = "Per role (gateway, host, worker): the Secrets Manager secrets it reads at boot."
  type        = map(list(string))

  validation {
    condition     = length(setsubtract(keys(var.secret_arns), ["gateway", "host", "worker"])) == 0
    error_message = "Secrets are given per role: gateway, host, worker."
  }

  validation {
    condition     = alltrue(flatten([for arns in values(var.secret_arns) : [for a in arns : can(regex("^arn:aws[a-z-]*:secretsmanager:[^*]+$", a))]]))
    error_message = "Each secret is a Secrets Manager ARN without wildcards."
  }
}

variable "log_group_arns" {
  description = "Per role: its CloudWatch log group ARN (without the trailing :*)."
  type        = map(string)

  validation {
    condition     = alltrue([for r in ["gateway", "host", "worker"] : can(regex("^arn:aws[a-z-]*:logs:[^*]+$", lookup(var.log_group_arns, r, "")))])
    error_message = "Give a log group ARN (without wildcards) for each of gateway, host and worker."
  }
}

variable "prometheus_workspace_arn" {
  description = "The Amazon Managed Service for Prometheus workspace the nodes' agents write their /metrics to."
  type        = string

  validation {
    condition     = can(regex("^arn:aws[a-z-]*:aps:", var.prometheus_workspace_arn))
    error_message = "The metrics workspace is an aps workspace ARN."
  }
}

variable "host_autoscaling_group_arn" {
  description = "The hosts' auto-scaling group (its ARN, or the ARN pattern with the group's name): hosts complete their own termination hook once drained."
  type        = string

  validation {
    condition     = can(regex("^arn:aws[a-z-]*:autoscaling:[^:]+:[0-9]+:autoScalingGroup:[^:]+:autoScalingGroupName/[A-Za-z0-9._-]+$", var.host_autoscaling_group_arn))
    error_message = "The host group is an autoscaling group ARN ending in autoScalingGroupName/<name>."
  }
}
