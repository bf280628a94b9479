{{/* Names: every object is `<release>-<component>`. */}}
{{- define "vieneu.name" -}}{{ .Chart.Name }}{{- end -}}

{{- define "vieneu.fullname" -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{- define "vieneu.labels" -}}
app.kubernetes.io/name: {{ include "vieneu.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Selector labels of one Deployment: dict "root" $ "component" "api" "deployment" "api" */}}
{{- define "vieneu.selector" -}}
app.kubernetes.io/name: {{ include "vieneu.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
vieneu.io/deployment: {{ .deployment }}
{{- end -}}

{{- define "vieneu.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" (include "vieneu.fullname" .)) -}}
{{- end -}}

{{- define "vieneu.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "vieneu.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{- define "vieneu.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{- define "vieneu.inferenceImage" -}}
{{- $repository := .Values.inference.image.repository | default .Values.image.repository -}}
{{- $base := .Values.image.tag | default .Chart.AppVersion -}}
{{- $tag := .Values.inference.image.tag | default (ternary (printf "%s-gpu" $base) $base .Values.inference.gpu.enabled) -}}
{{- printf "%s:%s" $repository $tag -}}
{{- end -}}

{{/* INFERENCE_URL of the processes that reach the inference Deployment's engine (the remote engine). */}}
{{- define "vieneu.inferenceUrl" -}}
{{- printf "http://%s-inference:%v" (include "vieneu.fullname" .) .Values.inference.port -}}
{{- end -}}

{{/* PLUGINS of the inference pods: inference.plugins, else workerPlugins. */}}
{{- define "vieneu.inferencePlugins" -}}
{{- .Values.inference.plugins | default .Values.workerPlugins -}}
{{- end -}}

{{/*
Variables the chart sets in pods' env itself, and what sets each. Another entry with the same
name (extraEnv, pipelines.deployments[].env, secrets.env) would come later in the list and win:
e.g. a second SHUTDOWN_TIMEOUT_SECONDS without terminationGracePeriodSeconds following it.
*/}}
{{- define "vieneu.reservedEnv" -}}
ROLES: "from each Deployment's role"
MODULES: "from each Deployment's role; pipelines.deployments[].modules for pipelines"
PLUGINS: "from api.plugins, inference.plugins, pipelines.deployments[].plugins or workerPlugins"
OPS_PORT: "from opsPort"
SHUTDOWN_TIMEOUT_SECONDS: "from shutdownTimeoutSeconds; terminationGracePeriodSeconds follows it"
PORT: "from api.port"
INFERENCE_PORT: "from inference.port"
INFERENCE_CONCURRENCY: "from inference.concurrency"
VOICE_MODELS: "from inference.voiceModels"
INFERENCE_URL: "from inference.port while inference.enabled; set it yourself only with inference.enabled=false, for an inference service outside this release"
HOST: "0.0.0.0, where the probes and Services reach the pod"
DATA_DIR: "/tmp/data, on the pod's emptyDir"
{{- end -}}

{{/*
Refusals of values that would deploy a broken platform: `helm template`, `install` and `upgrade`
fail before anything is applied (`helm lint` only lists a template's `fail` as [INFO]).
*/}}
{{- define "vieneu.checks" -}}
{{- $reserved := include "vieneu.reservedEnv" . | fromYaml }}
{{- if not .Values.inference.enabled }}
{{- $_ := unset $reserved "INFERENCE_URL" }}
{{- end }}
{{- $lists := dict "extraEnv" .Values.extraEnv "api.extraEnv" .Values.api.extraEnv "pipelines.extraEnv" .Values.pipelines.extraEnv "inference.extraEnv" .Values.inference.extraEnv }}
{{- range $where, $entries := $lists }}
{{- range $entries }}
{{- if hasKey $reserved (toString .name) }}
{{- fail (printf "%s sets %s, which the chart already sets (%s): a second entry would override the chart's value. Leave it out." $where .name (get $reserved (toString .name))) }}
{{- end }}
{{- end }}
{{- end }}
{{- range .Values.pipelines.deployments }}
{{- $where := printf "pipelines.deployments[%s].env" .name }}
{{- range $name, $_ := (.env | default dict) }}
{{- if hasKey $reserved $name }}
{{- fail (printf "%s sets %s, which the chart already sets (%s): a second entry would override the chart's value. Leave it out." $where $name (get $reserved $name)) }}
{{- end }}
{{- end }}
{{- end }}
{{- range $name, $_ := .Values.secrets.env }}
{{- if hasKey $reserved $name }}
{{- fail (printf "secrets.env sets %s, which the chart already sets (%s): a second entry would override the chart's value. Leave it out." $name (get $reserved $name)) }}
{{- end }}
{{- end }}
{{- /*
Audiobooks (plugins/audiobooks) render only where their workers run: `scheduler` and `mastering`
in a pipelines process and `renderer` in an inference process, each loading the plugin (PLUGINS);
the plugin also needs the engine service, which MODULES=inference provides.
*/}}
{{- $apiPlugins := .Values.api.plugins | default "" }}
{{- if and .Values.api.enabled (or (eq $apiPlugins "") (has "audiobooks" (splitList "," $apiPlugins))) }}
{{- $scheduler := false }}
{{- range .Values.pipelines.deployments }}
{{- if and (has "audiobooks" (splitList "," (.plugins | default $.Values.workerPlugins))) (has "inference" (splitList "," .modules)) }}
{{- $scheduler = true }}
{{- end }}
{{- end }}
{{- if not $scheduler }}
{{- fail "the API pods serve audiobooks (api.plugins), but no pipelines.deployments entry runs their scheduler and mastering: started books would stay queued. Add the entry of values.yaml (name: audiobooks, modules: inference, plugins: audiobooks, replicas: 1), or leave audiobooks out of api.plugins." }}
{{- end }}
{{- if and .Values.inference.enabled (not (has "audiobooks" (splitList "," (include "vieneu.inferencePlugins" .)))) }}
{{- fail "the API pods serve audiobooks (api.plugins), but inference.plugins leaves audiobooks out: no process renders their chapters. Add audiobooks to inference.plugins, or leave it out of api.plugins." }}
{{- end }}
{{- end }}
{{- end -}}

{{- define "vieneu.terminationGracePeriodSeconds" -}}
{{- add .Values.preStopSleepSeconds .Values.shutdownTimeoutSeconds .Values.terminationGraceMarginSeconds -}}
{{- end -}}

{{/* Environment every process gets: settings, secrets, the ops port and the shutdown timeout. */}}
{{- define "vieneu.commonEnv" -}}
- name: OPS_PORT
  value: {{ .Values.opsPort | quote }}
- name: SHUTDOWN_TIMEOUT_SECONDS
  value: {{ .Values.shutdownTimeoutSeconds | quote }}
- name: HOST
  value: "0.0.0.0"
- name: DATA_DIR
  value: /tmp/data
{{- $secretName := include "vieneu.secretName" . }}
{{- range $name, $ref := .Values.secrets.env }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $ref.secretName | default $secretName }}
      key: {{ $ref.key | default $name }}
      optional: {{ $ref.optional | default false }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
The pod template of one role. dict:
  root, component, deployment, roles, modules, plugins, env (list), ports (list),
  resources, nodeSelector, tolerations, affinity, podAnnotations, image, gpu (dict or nil), volumes, volumeMounts
*/}}
{{- define "vieneu.podTemplate" -}}
{{- $root := .root -}}
metadata:
  labels:
    {{- include "vieneu.selector" . | nindent 4 }}
  annotations:
    checksum/config: {{ include (print $root.Template.BasePath "/config.yaml") $root | sha256sum }}
    {{- with .podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "vieneu.serviceAccountName" $root }}
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: {{ include "vieneu.terminationGracePeriodSeconds" $root }}
  securityContext:
    {{- toYaml $root.Values.podSecurityContext | nindent 4 }}
  {{- with $root.Values.image.pullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: {{ .component }}
      image: {{ .image | quote }}
      imagePullPolicy: {{ $root.Values.image.pullPolicy }}
      # The image's entrypoint is tini (PID 1); node runs directly under it, never npm, so SIGTERM reaches it.
      args: ["node", "dist/core/main.js"]
      env:
        - name: ROLES
          value: {{ .roles | quote }}
        - name: MODULES
          value: {{ .modules | quote }}
        {{- if .plugins }}
        - name: PLUGINS
          value: {{ .plugins | quote }}
        {{- end }}
        {{- include "vieneu.commonEnv" $root | nindent 8 }}
        {{- with .env }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      envFrom:
        - configMapRef:
            name: {{ include "vieneu.fullname" $root }}-config
      ports:
        - name: ops
          containerPort: {{ $root.Values.opsPort }}
        {{- with .ports }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      startupProbe:
        httpGet: { path: /healthz, port: ops }
        {{- toYaml $root.Values.probes.startup | nindent 8 }}
      livenessProbe:
        httpGet: { path: /healthz, port: ops }
        {{- toYaml $root.Values.probes.liveness | nindent 8 }}
      readinessProbe:
        httpGet: { path: /readyz, port: ops }
        {{- toYaml $root.Values.probes.readiness | nindent 8 }}
      lifecycle:
        preStop:
          sleep: { seconds: {{ $root.Values.preStopSleepSeconds }} }
      securityContext:
        {{- toYaml $root.Values.securityContext | nindent 8 }}
      resources:
        {{- $resources := deepCopy (.resources | default dict) }}
        {{- if .gpu }}
        {{- $limits := merge (dict .gpu.resourceName .gpu.count) ($resources.limits | default dict) }}
        {{- $_ := set $resources "limits" $limits }}
        {{- end }}
        {{- toYaml $resources | nindent 8 }}
      volumeMounts:
        - { name: tmp, mountPath: /tmp }
        {{- with .volumeMounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
  volumes:
    - name: tmp
      emptyDir: {}
    {{- with .volumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}

{{/* A PodDisruptionBudget. dict: root, name, component, deployment, pdb */}}
{{- define "vieneu.pdb" -}}
{{- if .pdb.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ .name }}
  labels:
    {{- include "vieneu.labels" .root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  {{- if hasKey .pdb "minAvailable" }}
  minAvailable: {{ .pdb.minAvailable }}
  {{- else }}
  maxUnavailable: {{ .pdb.maxUnavailable | default 1 }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "vieneu.selector" . | nindent 6 }}
{{- end }}
{{- end -}}

{{/* An HPA on consumer lag (external metric). dict: root, name, component, autoscaling */}}
{{- define "vieneu.lagHpa" -}}
{{- if .autoscaling.enabled }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ .name }}
  labels:
    {{- include "vieneu.labels" .root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  scaleTargetRef: { apiVersion: apps/v1, kind: Deployment, name: {{ .name }} }
  minReplicas: {{ .autoscaling.minReplicas }}
  maxReplicas: {{ .autoscaling.maxReplicas }}
  metrics:
    - type: External
      external:
        metric:
          name: {{ .autoscaling.lag.metricName }}
          selector:
            matchLabels:
              {{- toYaml .autoscaling.lag.selector | nindent 14 }}
        target:
          type: AverageValue
          averageValue: {{ .autoscaling.lag.targetAverageValue | quote }}
{{- end }}
{{- end -}}
