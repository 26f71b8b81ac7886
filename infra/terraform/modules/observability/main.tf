# Logs, metrics and alarms. Each node's journald output goes to its role's log group; each node runs a
# Prometheus agent scraping its own /metrics and remote-writing to the Amazon Managed Prometheus
# workspace here; alarms go to one SNS topic: unhealthy gateways (CloudWatch, the load balancer),
# the control store (CloudWatch, RDS), and Rookery's own metrics (Prometheus rules).

resource "aws_cloudwatch_log_group" "node" {
  for_each          = toset(["gateway", "host", "worker"])
  name              = "/rookery/${var.name}/${each.key}"
  retention_in_days = var.log_retention_days
  kms_key_id        = var.kms_key_arn
  tags              = var.tags
}

resource "aws_cloudwatch_log_group" "prometheus" {
  name              = "/rookery/${var.name}/prometheus"
  retention_in_days = var.log_retention_days
  kms_key_id        = var.kms_key_arn
  tags              = var.tags
}

resource "aws_prometheus_workspace" "this" {
  alias       = var.name
  kms_key_arn = var.kms_key_arn
  tags        = var.tags

  logging_configuration {
    log_group_arn = "${aws_cloudwatch_log_group.prometheus.arn}:*"
  }
}

resource "aws_sns_topic" "alarms" {
  name              = "${var.name}-alarms"
  kms_master_key_id = var.kms_key_arn
  tags              = var.tags
}

resource "aws_sns_topic_subscription" "email" {
  for_each  = toset(var.alarm_emails)
  topic_arn = aws_sns_topic.alarms.arn
  protocol  = "email"
  endpoint  = each.value
}

locals {
  cloudwatch_alarms = {
    gateway-unhealthy = {
      namespace   = "AWS/NetworkELB"
      metric      = "UnHealthyHostCount"
      statistic   = "Maximum"
      comparison  = "GreaterThanThreshold"
      threshold   = 0
      periods     = 3
      description = "A gateway fails the load balancer's health check: see its log group and instance."
      dimensions  = { LoadBalancer = var.load_balancer_arn_suffix, TargetGroup = var.target_group_arn_suffix }
    }
    control-cpu = {
      namespace   = "AWS/RDS"
      metric      = "CPUUtilization"
      statistic   = "Average"
      comparison  = "GreaterThanThreshold"
      threshold   = 80
      periods     = 5
      description = "The control store's CPU above 80% for 5 minutes: leases renew there; scale its instance class."
      dimensions  = { DBInstanceIdentifier = var.db_instance_identifier }
    }
    control-free-storage = {
      namespace   = "AWS/RDS"
      metric      = "FreeStorageSpace"
      statistic   = "Minimum"
      comparison  = "LessThanThreshold"
      threshold   = var.db_free_storage_alarm_bytes
      periods     = 1
      description = "The control store is running out of storage (autoscaling caps at four times the initial size)."
      dimensions  = { DBInstanceIdentifier = var.db_instance_identifier }
    }
    control-memory = {
      namespace   = "AWS/RDS"
      metric      = "FreeableMemory"
      statistic   = "Minimum"
      comparison  = "LessThanThreshold"
      threshold   = 268435456
      periods     = 5
      description = "The control store has under 256 MiB freeable memory."
      dimensions  = { DBInstanceIdentifier = var.db_instance_identifier }
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "this" {
  for_each            = local.cloudwatch_alarms
  alarm_name          = "${var.name}-${each.key}"
  alarm_description   = each.value.description
  namespace           = each.value.namespace
  metric_name         = each.value.metric
  statistic           = each.value.statistic
  comparison_operator = each.value.comparison
  threshold           = each.value.threshold
  period              = 60
  evaluation_periods  = each.value.periods
  dimensions          = each.value.dimensions
  treat_missing_data  = "notBreaching"
  alarm_actions       = [aws_sns_topic.alarms.arn]
  ok_actions          = [aws_sns_topic.alarms.arn]
  tags                = var.tags
}

# Rookery's own alarms, on what the nodes export at /metrics (the vitest assertions check that a service
# exports every metric a rule names). Mirror lag: each host exports the worst of its running tenants
# (services/host/src/metrics.ts); rookery_host_tenants_mirrored > 0 keeps a host that mirrors nothing silent.
resource "aws_prometheus_rule_group_namespace" "rookery" {
  name         = "rookery"
  workspace_id = aws_prometheus_workspace.this.id
  data = yamlencode({
    groups = [{
      name = "rookery"
      rules = [
        {
          alert       = "RookeryMirrorLag"
          expr        = "max by (instance) (rookery_host_tenant_mirror_lag_seconds) > ${var.mirror_lag_alarm_seconds} and on (instance) rookery_host_tenants_mirrored > 0"
          "for"       = "5m"
          annotations = { summary = "A tenant on {{ $labels.instance }} has committed transactions the mirror has not had for more than ${var.mirror_lag_alarm_seconds} s: a failover of that host now would lose them. Its tenants' stats (Mirror.LagMs, LastError) say which and why." }
        },
        {
          alert       = "RookeryTenantCrashLoop"
          expr        = "increase(rookery_host_tenant_crashes_total[10m]) > 3"
          annotations = { summary = "Tenants crash repeatedly on a host: see the host's log group." }
        },
        {
          alert       = "RookeryTenantStartFailures"
          expr        = "increase(rookery_host_tenant_start_failures_total[10m]) > 0"
          annotations = { summary = "Tenants fail to start on a host." }
        },
        {
          alert       = "RookeryBackupJobsFailing"
          expr        = "increase(rookery_worker_jobs_total{outcome=\"failed\"}[1h]) > 0"
          annotations = { summary = "Worker jobs (backups, restores, sweeps) failed in the last hour." }
        },
        {
          alert       = "RookeryReaperFailures"
          expr        = "increase(rookery_host_reaper_failures_total[10m]) > 0"
          annotations = { summary = "The reaper failed to re-place a dead host's tenants." }
        },
      ]
    }]
  })
}
