# The public entry: a network load balancer passing TCP:443 and the RavenDB TCP port through untouched
# (so mutual TLS ends at the gateway, which sees the client's certificate), and the gateways'
# auto-scaling group behind it.

resource "aws_lb" "this" {
  name                             = "${var.name}-gw"
  load_balancer_type               = "network"
  internal                         = var.internal
  subnets                          = var.public_subnets
  enable_cross_zone_load_balancing = true
  enable_deletion_protection       = var.deletion_protection
  tags                             = var.tags

  access_logs {
    bucket  = var.access_logs_bucket
    prefix  = "nlb/${var.name}"
    enabled = true
  }
}

locals {
  # What the load balancer passes through untouched, by name: the port it listens on, and the gateways'
  # port it forwards to. HTTPS listens on 443. The official RavenDB client's subscription worker is told
  # the gateway's own TCP port on the name it used (GET /info/remote-task/tcp), so that one listens on
  # the gateways' port itself.
  passthrough = merge(
    { https = { name = "${var.name}-gw", listen = 443, target = var.gateway_port } },
    var.raven_tcp_port == null ? {} : {
      raven_tcp = { name = "${var.name}-gw-raven", listen = var.raven_tcp_port, target = var.raven_tcp_port }
    },
  )
}

resource "aws_lb_target_group" "gateway" {
  for_each             = local.passthrough
  name                 = each.value.name
  port                 = each.value.target
  protocol             = "TCP"
  target_type          = "instance"
  vpc_id               = var.vpc_id
  preserve_client_ip   = true
  deregistration_delay = 30
  tags                 = var.tags

  # The gateways' ports ask every client for a certificate: the check has a plain HTTP port of its own.
  health_check {
    protocol            = "HTTP"
    port                = tostring(var.health_check_port)
    path                = "/healthz"
    matcher             = "200"
    interval            = 10
    healthy_threshold   = 3
    unhealthy_threshold = 3
  }
}

# TCP, not TLS: the load balancer never holds the server key and never terminates the client's TLS.
resource "aws_lb_listener" "passthrough" {
  for_each          = local.passthrough
  load_balancer_arn = aws_lb.this.arn
  port              = each.value.listen
  protocol          = "TCP"
  tags              = var.tags

  default_action {
    type             = "forward"
    target_group_arn = aws_lb_target_group.gateway[each.key].arn
  }
}

# Deployments made before the RavenDB port keep their HTTPS target group and listener.
moved {
  from = aws_lb_target_group.gateway
  to   = aws_lb_target_group.gateway["https"]
}

moved {
  from = aws_lb_listener.https_passthrough
  to   = aws_lb_listener.passthrough["https"]
}

resource "aws_vpc_security_group_ingress_rule" "raven_tcp_clients" {
  for_each          = var.raven_tcp_port == null ? toset([]) : toset(var.allowed_cidrs)
  security_group_id = module.fleet.security_group_id
  description       = "RavenDB TCP clients (the NLB preserves their address)"
  ip_protocol       = "tcp"
  from_port         = var.raven_tcp_port
  to_port           = var.raven_tcp_port
  cidr_ipv4         = each.value
}

resource "aws_vpc_security_group_ingress_rule" "clients" {
  for_each          = toset(var.allowed_cidrs)
  security_group_id = module.fleet.security_group_id
  description       = "Clients (the NLB preserves their address)"
  ip_protocol       = "tcp"
  from_port         = var.gateway_port
  to_port           = var.gateway_port
  cidr_ipv4         = each.value
}

resource "aws_vpc_security_group_ingress_rule" "health_checks" {
  security_group_id = module.fleet.security_group_id
  description       = "Load balancer health checks"
  ip_protocol       = "tcp"
  from_port         = var.health_check_port
  to_port           = var.health_check_port
  cidr_ipv4         = var.vpc_cidr_block
}

module "fleet" {
  source = "../fleet"

  name                 = "${var.name}-gateway"
  image_id             = var.image_id
  instance_type        = var.instance_type
  subnet_ids           = var.private_subnets
  vpc_id               = var.vpc_id
  vpc_cidr_block       = var.vpc_cidr_block
  s3_prefix_list_id    = var.s3_prefix_list_id
  egress_ports_in_vpc  = { endpoints = 443, database = 5432, hosts = var.host_relay_port }
  instance_profile_arn = var.instance_profile_arn
  user_data            = var.user_data
  min_size             = var.min_size
  max_size             = var.max_size
  desired_capacity     = var.desired_capacity
  target_group_arns    = [for group in aws_lb_target_group.gateway : group.arn]
  health_check_type    = "ELB"
  kms_key_arn          = var.kms_key_arn
  tags                 = var.tags
}
