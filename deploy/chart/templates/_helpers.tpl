{{/* The release's full name: the release name when it already says fleet-rotator, else <release>-fleet-rotator. */}}
{{- define "fleet-rotator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels every object carries; the selector labels are the stable subset. */}}
{{- define "fleet-rotator.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "fleet-rotator.labels" -}}
{{ include "fleet-rotator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: credential-rotation
app.kubernetes.io/part-of: fleet
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "fleet-rotator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "fleet-rotator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: with serviceAccount.create=false, name the existing ServiceAccount the CronJob runs as" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "fleet-rotator.configSecretName" -}}
{{- default (printf "%s-config" (include "fleet-rotator.fullname" .)) .Values.config.existingSecret -}}
{{- end -}}

{{/* repository@digest when a digest is given (pulled by digest), else repository:tag (default: appVersion). */}}
{{- define "fleet-rotator.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The namespaces of rotate.secrets, each once, sorted: one Role and RoleBinding each. */}}
{{- define "fleet-rotator.namespaces" -}}
{{- $namespaces := list -}}
{{- range .Values.rotate.secrets -}}
{{- $namespaces = append $namespaces (index (splitList "/" .) 0) -}}
{{- end -}}
{{- $namespaces | uniq | sortAlpha | toJson -}}
{{- end -}}

{{/* The generated fleet.yaml: one file provider over the kubeconfigs of config.kubeconfigs, no hub (in-cluster). */}}
{{- define "fleet-rotator.fleetYaml" -}}
{{- if .Values.config.fleetYaml -}}
{{- .Values.config.fleetYaml -}}
{{- else -}}
apiVersion: fleet/v1alpha1
kind: FleetConfig
providers:
  - name: members
    type: file
    # Relative to this file: /etc/fleet in the Pod.
    kubeconfig: {{ keys .Values.config.kubeconfigs | sortAlpha | toJson }}
{{- end -}}
{{- end -}}

{{/* The exporter's objects: <fullname>-exporter, with component metrics-exporter (its selector includes it). */}}
{{- define "fleet-rotator.exporterName" -}}
{{- printf "%s-exporter" (include "fleet-rotator.fullname" .) -}}
{{- end -}}

{{- define "fleet-rotator.exporterSelectorLabels" -}}
{{ include "fleet-rotator.selectorLabels" . }}
app.kubernetes.io/component: metrics-exporter
{{- end -}}

{{- define "fleet-rotator.exporterLabels" -}}
{{ include "fleet-rotator.exporterSelectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: fleet
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "fleet-rotator.exporterServiceAccountName" -}}
{{- if .Values.exporter.serviceAccount.create -}}
{{- default (include "fleet-rotator.exporterName" .) .Values.exporter.serviceAccount.name -}}
{{- else -}}
{{- required "exporter.serviceAccount.name: with exporter.serviceAccount.create=false, name the existing ServiceAccount the exporter runs as" .Values.exporter.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* A Prometheus alert template's `{{ $labels.NAME }}`, written out by Helm as it is (not run by Helm). */}}
{{- define "fleet-rotator.promLabel" -}}
{{- printf "{{ $labels.%s }}" . -}}
{{- end -}}
