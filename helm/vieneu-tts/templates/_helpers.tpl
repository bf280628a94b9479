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
