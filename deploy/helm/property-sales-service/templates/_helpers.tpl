{{/* The chart's name, and the release's: 63 characters at most, as Kubernetes names allow. */}}
{{- define "property-sales-service.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "property-sales-service.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* What selects the release's pods. */}}
{{- define "property-sales-service.selectorLabels" -}}
app.kubernetes.io/name: {{ include "property-sales-service.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "property-sales-service.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "property-sales-service.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "property-sales-service.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/*
The Secret's entries made from the values, by variable, the empty ones left out. DATABASE_URL is
required unless existingSecret names a Secret, and then none may be given.
*/}}
{{- define "property-sales-service.secretEntries" -}}
{{- $entries := dict
  "DATABASE_URL" .Values.database.url
  "DATABASE_READ_URLS" .Values.database.readUrls
  "EVENTS_URL" .Values.rabbitmq.url
  "REDIS_URL" .Values.redis.url
  "AUTH_API_KEYS" .Values.auth.apiKeys }}
{{- $given := dict }}
{{- range $name, $value := $entries }}
{{- if $value }}{{ $_ := set $given $name $value }}{{ end }}
{{- end }}
{{- if .Values.existingSecret }}
{{- if $given }}
{{- fail (printf "existingSecret %s is set: give %s in that Secret, not in the values" .Values.existingSecret (keys $given | sortAlpha | join ", ")) }}
{{- end }}
{{- else if not .Values.database.url }}
{{- fail "database.url is required (DATABASE_URL: mysql://user:pass@host:3306/db), or existingSecret naming a Secret that holds it" }}
{{- end }}
{{- toYaml $given }}
{{- end }}

{{/* The Secret the pods read their credentials from: existingSecret, or the chart's own. */}}
{{- define "property-sales-service.secretName" -}}
{{- .Values.existingSecret | default (include "property-sales-service.fullname" .) }}
{{- end }}

{{/* What the service's pods and the migrations' share: no service-account token, the security
context, the pull secrets and a writable /tmp. */}}
{{- define "property-sales-service.podShared" -}}
automountServiceAccountToken: false
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
volumes:
  - name: tmp
    emptyDir:
      sizeLimit: 64Mi
{{- end }}

{{- define "property-sales-service.containerShared" -}}
securityContext:
  {{- toYaml .Values.securityContext | nindent 2 }}
volumeMounts:
  - name: tmp
    mountPath: /tmp
{{- end }}
