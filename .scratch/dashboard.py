import json
J='job="meridian"'
R='[$__rate_interval]'
def count(sel=''):
    extra = ',' + sel if sel else ''
    return f'http_request_duration_seconds_count{{{J}{extra}}}'
panels=[]
FIVEXX=count('status_code=~"5.."')
LOGIN429=count('route="/api/auth/login",status_code="429"')
def panel(title, description, unit, targets, w=12, h=8):
    panels.append(dict(title=title, description=description, unit=unit, targets=targets, w=w, h=h))
def t(expr, legend):
    return dict(expr=expr, legendFormat=legend)

panel('Requests by route', 'Answers per second, by route pattern: what the service is asked for.', 'reqps',
  [t(f'sum by (route) (rate({count()}{R}))', '{{route}}')])
panel('Server errors by route', 'Share of answers that are 5xx, by route: what the error-budget alerts (MeridianErrorBudgetBurnFast, …Slow) count. 0 when there are none.', 'percentunit',
  [t(f'(sum by (route) (rate({FIVEXX}{R})) or sum by (route) (rate({count()}{R})) * 0) / sum by (route) (rate({count()}{R}))', '{{route}}')])
panel('Answers by status', 'Answers per second by status code, every route together.', 'reqps',
  [t(f'sum by (status_code) (rate({count()}{R}))', '{{status_code}}')])
panel('Latency by route', 'p50 and p99 of the time from a request\'s arrival until its answer was handed to the operating system.', 's',
  [t(f'histogram_quantile(0.99, sum by (route, le) (rate(http_request_duration_seconds_bucket{{{J}}}{R})))', 'p99 {{route}}'),
   t(f'histogram_quantile(0.5, sum by (route, le) (rate(http_request_duration_seconds_bucket{{{J}}}{R})))', 'p50 {{route}}')])
panel('Replicas: scraped and ready', 'Per replica: 1 when Prometheus scrapes it (up) and when /health/ready answers 200 (meridian_ready). The alerts MeridianReplicaDown and MeridianReplicaNotReady watch these.', 'none',
  [t(f'up{{{J}}}', 'up {{instance}}'), t(f'meridian_ready{{{J}}}', 'ready {{instance}}')])
panel('Refusals by reason', 'Requests refused per second: past a client\'s fair share (429, by route and policy), past the failed-login limits (429), because the login throttle\'s store failed (503), and requests for no route (404).', 'reqps',
  [t(f'sum by (route, policy) (rate(meridian_fair_share_refusals_total{{{J}}}{R}))', 'fair share {{route}} {{policy}}'),
   t(f'sum(rate({LOGIN429}{R}))', 'failed-login limit'),
   t(f'sum(rate(meridian_login_refused_throttle_unavailable_total{{{J}}}{R}))', 'throttle store unavailable'),
   t(f'sum(rate(meridian_unrouted_requests_total{{{J}}}{R}))', 'no route (404)')])
panel('Markdown renders waiting', 'Per replica: renders waiting for a free render thread.', 'none',
  [t(f'meridian_markdown_queued_renders{{{J}}}', '{{instance}}')], w=8)
panel('Markdown characters in the render queue', 'Per replica: characters of Markdown waiting for or in a render thread. Past 8 MiB the route answers 503.', 'none',
  [t(f'meridian_markdown_pending_characters{{{J}}}', '{{instance}}')], w=8)
panel('Event-loop delay', 'Per replica, p99 of the event loop\'s delay: past 1 s a replica answers 503 (under-pressure).', 's',
  [t(f'nodejs_eventloop_lag_p99_seconds{{{J}}}', '{{instance}}')], w=8)
panel('Memory', 'Per replica: resident memory and the JavaScript heap in use. docs/operations.md says what a replica needs.', 'bytes',
  [t(f'process_resident_memory_bytes{{{J}}}', 'resident {{instance}}'), t(f'nodejs_heap_size_used_bytes{{{J}}}', 'heap {{instance}}')])
panel('CPU', 'Per replica, share of one core: a replica serves requests on one core (its render threads add to it).', 'percentunit',
  [t(f'rate(process_cpu_seconds_total{{{J}}}{R})', '{{instance}}')])
panel('PostgreSQL pool', 'Per replica, the pool\'s connections by state (waiting: queries waiting for a connection), and whether the replica learns of user changes by notification (1) or reads them per request (0). Empty on SQLite.', 'none',
  [t(f'meridian_database_pool_connections{{{J}}}', '{{state}} {{instance}}'), t(f'meridian_database_notifications_live{{{J}}}', 'notifications {{instance}}')])
panel('Sessions', 'Sessions started (logins) and ended per second, by cause, every replica together.', 'ops',
  [t(f'sum(rate(meridian_sessions_started_total{{{J}}}{R}))', 'started'),
   t(f'sum by (cause) (rate(meridian_sessions_ended_total{{{J}}}{R}))', 'ended: {{cause}}')])

out=[]
x=y=0; rowh=0
for i,p in enumerate(panels):
    if x + p['w'] > 24:
        x=0; y+=rowh; rowh=0
    out.append({
      'id': i+1, 'type': 'timeseries', 'title': p['title'], 'description': p['description'],
      'datasource': {'type': 'prometheus', 'uid': 'prometheus'},
      'gridPos': {'x': x, 'y': y, 'w': p['w'], 'h': p['h']},
      'fieldConfig': {'defaults': {'unit': p['unit']}, 'overrides': []},
      'options': {'legend': {'displayMode': 'list', 'placement': 'bottom', 'showLegend': True}, 'tooltip': {'mode': 'multi', 'sort': 'desc'}},
      'targets': [{'refId': chr(65+j), 'datasource': {'type': 'prometheus', 'uid': 'prometheus'}, 'expr': tt['expr'], 'legendFormat': tt['legendFormat'], 'range': True} for j,tt in enumerate(p['targets'])]
    })
    x+=p['w']; rowh=max(rowh,p['h'])
dash={'uid':'meridian','title':'Meridian','description':'Rate, errors and latency by route; readiness per replica; refusals by reason; the Markdown render queue; event-loop delay, memory and CPU; the database pool; sessions. Every query is run against a real Prometheus by test/cluster/prometheus.test.ts.',
  'tags':['meridian'],'timezone':'utc','editable':False,'graphTooltip':1,'schemaVersion':39,'version':1,
  'time':{'from':'now-1h','to':'now'},'refresh':'30s','templating':{'list':[]},'annotations':{'list':[]},'panels':out}
open('deploy/grafana/dashboards/meridian.json','w').write(json.dumps(dash,indent=2)+'\n')
