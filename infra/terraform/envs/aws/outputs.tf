output "rookery" {
  description = "Where to point DNS, upload releases, put secrets; the groups to scale."
  value = {
    gateway_dns_name   = module.rookery.gateway_dns_name
    release_bucket     = module.rookery.release_bucket
    secret_names       = module.rookery.secret_names
    autoscaling_groups = module.rookery.autoscaling_groups
    alarm_topic_arn    = module.rookery.alarm_topic_arn
  }
}
