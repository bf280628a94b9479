{{- define "vieneu.name" -}}{{ .Chart.Name }}{{- end -}}
{{- define "vieneu.labels" -}}
app.kubernetes.io/name: {{ include "vieneu.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}
{{- define "vieneu.env" -}}
{{- range $k, $v := .Values.env }}
- name: {{ $k }}
  value: {{ $v | quote }}
{{- end }}
- name: ADMIN_TOKEN
  valueFrom: { secretKeyRef: { name: {{ .Values.existingSecret }}, key: ADMIN_TOKEN } }
- name: URL_SIGNING_SECRET
  valueFrom: { secretKeyRef: { name: {{ .Values.existingSecret }}, key: URL_SIGNING_SECRET } }
- name: CLICKHOUSE_PASSWORD
  valueFrom: { secretKeyRef: { name: {{ .Values.existingSecret }}, key: CLICKHOUSE_PASSWORD, optional: true } }
{{- end -}}
