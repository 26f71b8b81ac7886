# The mirror: one EFS Regional file system (the network disk of DESIGN.md) shared by every host
# (read-write) and every worker (read-only), over TLS with IAM authorisation, through one access
# point that pins the POSIX identity and the root directory.

resource "aws_efs_file_system" "this" {
  creation_token   = "${var.name}-mirror"
  encrypted        = true
  kms_key_id       = var.kms_key_arn
  performance_mode = "generalPurpose"
  # Elastic throughput: a failover's restore reads a burst that provisioned throughput would throttle.
  throughput_mode = "elastic"
  tags            = merge(var.tags, { Name = "${var.name}-mirror" })

  lifecycle_policy {
    transition_to_ia = "AFTER_30_DAYS"
  }

  lifecycle_policy {
    transition_to_primary_storage_class = "AFTER_1_ACCESS"
  }
}

resource "aws_efs_backup_policy" "this" {
  file_system_id = aws_efs_file_system.this.id

  backup_policy {
    status = "ENABLED"
  }
}

resource "aws_security_group" "mount_targets" {
  name        = "${var.name}-mirror"
  description = "EFS mount targets of the mirror: NFS from hosts and workers"
  vpc_id      = var.vpc_id
  tags        = var.tags
}

resource "aws_vpc_security_group_ingress_rule" "nfs" {
  for_each                     = { hosts = var.writer_security_group_id, workers = var.reader_security_group_id }
  security_group_id            = aws_security_group.mount_targets.id
  description                  = "NFS from the ${each.key}"
  ip_protocol                  = "tcp"
  from_port                    = 2049
  to_port                      = 2049
  referenced_security_group_id = each.value
}

resource "aws_efs_mount_target" "this" {
  count           = length(var.private_subnets)
  file_system_id  = aws_efs_file_system.this.id
  subnet_id       = var.private_subnets[count.index]
  security_groups = [aws_security_group.mount_targets.id]
}

resource "aws_efs_access_point" "mirror" {
  file_system_id = aws_efs_file_system.this.id
  tags           = merge(var.tags, { Name = "${var.name}-mirror" })

  posix_user {
    uid = var.uid
    gid = var.uid
  }

  root_directory {
    path = "/mirror"
    creation_info {
      owner_uid   = var.uid
      owner_gid   = var.uid
      permissions = "0750"
    }
  }
}

data "aws_iam_policy_document" "file_system" {
  statement {
    sid       = "HostsMountAndWrite"
    actions   = ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"]
    resources = [aws_efs_file_system.this.arn]
    principals {
      type        = "AWS"
      identifiers = [var.writer_role_arn]
    }
    condition {
      test     = "StringEquals"
      variable = "elasticfilesystem:AccessPointArn"
      values   = [aws_efs_access_point.mirror.arn]
    }
  }

  statement {
    sid       = "WorkersMountReadOnly"
    actions   = ["elasticfilesystem:ClientMount"]
    resources = [aws_efs_file_system.this.arn]
    principals {
      type        = "AWS"
      identifiers = [var.reader_role_arn]
    }
    condition {
      test     = "StringEquals"
      variable = "elasticfilesystem:AccessPointArn"
      values   = [aws_efs_access_point.mirror.arn]
    }
  }

  statement {
    sid       = "TlsOnly"
    effect    = "Deny"
    actions   = ["*"]
    resources = [aws_efs_file_system.this.arn]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }
}

resource "aws_efs_file_system_policy" "this" {
  file_system_id = aws_efs_file_system.this.id
  policy         = data.aws_iam_policy_document.file_system.json
}
