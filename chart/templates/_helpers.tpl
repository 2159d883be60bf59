{{/*
Chart name, truncated to the 63 characters a DNS label allows.
*/}}
{{- define "lance-catalog.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name: <release>-<chart> unless the release name already
contains the chart name. Truncated to 63 characters (DNS label).
*/}}
{{- define "lance-catalog.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
chart label value: <name>-<version>, "+" is not allowed in label values.
*/}}
{{- define "lance-catalog.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels on every object.
*/}}
{{- define "lance-catalog.labels" -}}
helm.sh/chart: {{ include "lance-catalog.chart" . }}
{{ include "lance-catalog.selectorLabels" . }}
app.kubernetes.io/version: {{ include "lance-catalog.imageTag" . | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/component: server
app.kubernetes.io/part-of: lance-catalog
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Selector labels: immutable on a Deployment, so they never carry versions.
*/}}
{{- define "lance-catalog.selectorLabels" -}}
app.kubernetes.io/name: {{ include "lance-catalog.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Service account name.
*/}}
{{- define "lance-catalog.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "lance-catalog.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Image tag (defaults to the chart's appVersion) and full reference; a digest,
when given, pins the image.
*/}}
{{- define "lance-catalog.imageTag" -}}
{{- default .Chart.AppVersion .Values.image.tag }}
{{- end }}

{{- define "lance-catalog.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (include "lance-catalog.imageTag" .) }}
{{- end }}
{{- end }}

{{/*
`warehouses` as the server spells it. YAML 1.1 readers turn a bare on/off
into a boolean, so both spellings are accepted.
*/}}
{{- define "lance-catalog.warehouses" -}}
{{- $w := .Values.warehouses }}
{{- if kindIs "bool" $w }}
{{- ternary "on" "off" $w }}
{{- else if has (toString $w) (list "on" "off") }}
{{- toString $w }}
{{- else }}
{{- fail (printf "warehouses must be \"on\" or \"off\", not %v" $w) }}
{{- end }}
{{- end }}

{{/*
Name of the ConfigMap holding config.toml (the chart's or an existing one).
*/}}
{{- define "lance-catalog.configMapName" -}}
{{- if .Values.existingConfigMap }}
{{- .Values.existingConfigMap }}
{{- else }}
{{- printf "%s-config" (include "lance-catalog.fullname" .) }}
{{- end }}
{{- end }}

{{- define "lance-catalog.hasConfig" -}}
{{- if or .Values.config .Values.existingConfigMap }}true{{ end }}
{{- end }}

{{/*
Name of the ConfigMap holding Cedar policy files.
*/}}
{{- define "lance-catalog.policiesConfigMapName" -}}
{{- if .Values.auth.existingPoliciesConfigMap }}
{{- .Values.auth.existingPoliciesConfigMap }}
{{- else }}
{{- printf "%s-policies" (include "lance-catalog.fullname" .) }}
{{- end }}
{{- end }}

{{- define "lance-catalog.hasPolicies" -}}
{{- if or .Values.auth.policies .Values.auth.existingPoliciesConfigMap }}true{{ end }}
{{- end }}

{{/*
Name of the PVC (an existing claim or the chart's).
*/}}
{{- define "lance-catalog.claimName" -}}
{{- if .Values.persistence.existingClaim }}
{{- .Values.persistence.existingClaim }}
{{- else }}
{{- printf "%s-data" (include "lance-catalog.fullname" .) }}
{{- end }}
{{- end }}

{{/*
The fewest replicas the release runs (the HPA's floor when it is on).
*/}}
{{- define "lance-catalog.minReplicas" -}}
{{- if .Values.autoscaling.enabled }}
{{- .Values.autoscaling.minReplicas | int }}
{{- else }}
{{- .Values.replicaCount | int }}
{{- end }}
{{- end }}

{{/*
Whether root is a local path (a path or file://), as opposed to an object
store URI.
*/}}
{{- define "lance-catalog.rootIsLocal" -}}
{{- $root := toString .Values.root }}
{{- if or (hasPrefix "/" $root) (hasPrefix "file://" $root) (hasPrefix "./" $root) }}true{{ end }}
{{- end }}

{{/*
Settings that cannot work together fail the render with a message, rather
than a pod that crash-loops or replicas that each keep their own catalog.
*/}}
{{- define "lance-catalog.validate" -}}
{{- $root := toString .Values.root }}
{{- if not $root }}
{{- fail "root is required: the storage root every replica shares, e.g. s3://bucket/lance-catalog" }}
{{- end }}
{{- $min := include "lance-catalog.minReplicas" . | int }}
{{- $max := $min }}
{{- if .Values.autoscaling.enabled }}{{ $max = .Values.autoscaling.maxReplicas | int }}{{ end }}
{{- if and (hasPrefix "memory://" $root) (gt $max 1) }}
{{- fail "root memory:// keeps the catalog inside one process: with several replicas each would serve its own catalog. Use one replica (replicaCount: 1, autoscaling off) or an object store root." }}
{{- end }}
{{- if include "lance-catalog.rootIsLocal" . }}
{{- if not .Values.persistence.enabled }}
{{- if gt $max 1 }}
{{- fail (printf "root %s is a local path but persistence is off: each replica would keep its own catalog on its own disk. Use an object store root (s3://...) or persistence with a ReadWriteMany volume." $root) }}
{{- end }}
{{- else }}
{{- $path := trimPrefix "file://" $root }}
{{- $mount := trimSuffix "/" .Values.persistence.mountPath }}
{{- if not (or (eq (trimSuffix "/" $path) $mount) (hasPrefix (printf "%s/" $mount) $path)) }}
{{- fail (printf "root %s is not under persistence.mountPath %s" $root .Values.persistence.mountPath) }}
{{- end }}
{{- if and (gt $max 1) (not (has "ReadWriteMany" .Values.persistence.accessModes)) (not .Values.persistence.existingClaim) }}
{{- fail "several replicas share one local root: persistence.accessModes must include ReadWriteMany" }}
{{- end }}
{{- end }}
{{- else if .Values.persistence.enabled }}
{{- fail (printf "persistence.enabled is for a local root (a path under persistence.mountPath); root %s is not one" $root) }}
{{- end }}
{{- if not (has (toString .Values.auth.mode) (list "none" "required")) }}
{{- fail (printf "auth.mode must be none or required, not %v" .Values.auth.mode) }}
{{- end }}
{{- if not (has (toString .Values.logFormat) (list "json" "text")) }}
{{- fail (printf "logFormat must be json or text, not %v" .Values.logFormat) }}
{{- end }}
{{- range $k, $v := .Values.storageOptions }}
{{- if or (contains "," (toString $k)) (contains "," (toString $v)) (contains "=" (toString $k)) }}
{{- fail (printf "storageOptions.%s: keys and values may not contain ',' (the server splits LANCE_CATALOG_STORAGE_OPTIONS on it) and keys may not contain '='; put such an option in config as storage_options" $k) }}
{{- end }}
{{- if and (regexMatch "(?i)(secret|password|token|access_key|account_key|sas_)" (toString $k)) (not (hasSuffix "_file" (toString $k))) }}
{{- fail (printf "storageOptions.%s looks like a credential: values are stored in plain text. Put it in a Secret and name it in storageCredentials.existingSecret" $k) }}
{{- end }}
{{- end }}
{{- range $env, $key := .Values.storageCredentials.keys }}
{{- if not (regexMatch "^[A-Za-z_][A-Za-z0-9_]*$" (toString $env)) }}
{{- fail (printf "storageCredentials.keys: %s is not an environment variable name" $env) }}
{{- end }}
{{- end }}
{{- if and .Values.storageCredentials.keys (not .Values.storageCredentials.existingSecret) }}
{{- fail "storageCredentials.keys maps keys of a Secret: set storageCredentials.existingSecret" }}
{{- end }}
{{- if and .Values.podDisruptionBudget.minAvailable .Values.podDisruptionBudget.maxUnavailable }}
{{- fail "podDisruptionBudget: set minAvailable or maxUnavailable, not both" }}
{{- end }}
{{- if and .Values.autoscaling.enabled (gt (.Values.autoscaling.minReplicas | int) (.Values.autoscaling.maxReplicas | int)) }}
{{- fail "autoscaling.minReplicas is above autoscaling.maxReplicas" }}
{{- end }}
{{- if and .Values.config .Values.existingConfigMap }}
{{- fail "set config or existingConfigMap, not both" }}
{{- end }}
{{- if and .Values.config (not (kindIs "string" .Values.config)) }}
{{- fail "config is the text of a TOML file (use a block scalar: config: |)" }}
{{- end }}
{{- end }}

{{/*
A scalar value as the server reads it from its environment. YAML numbers
reach templates as floats: whole ones print without an exponent
(2147483648, not 2.147483648e+09).
*/}}
{{- define "lance-catalog.scalar" -}}
{{- if and (kindIs "float64" .) (eq (floor .) .) }}
{{- printf "%d" (int64 .) }}
{{- else }}
{{- toString . }}
{{- end }}
{{- end }}

{{/*
storageOptions as LANCE_CATALOG_STORAGE_OPTIONS: KEY=VALUE pairs, comma
separated, sorted by key.
*/}}
{{- define "lance-catalog.storageOptions" -}}
{{- $pairs := list }}
{{- range $k, $v := .Values.storageOptions }}
{{- $pairs = append $pairs (printf "%s=%s" $k (include "lance-catalog.scalar" $v)) }}
{{- end }}
{{- join "," $pairs }}
{{- end }}

{{/*
imagePullSecrets as a list of {name}: plain names are accepted too.
*/}}
{{- define "lance-catalog.pullSecrets" -}}
{{- $secrets := list }}
{{- range .Values.imagePullSecrets }}
{{- if kindIs "string" . }}
{{- $secrets = append $secrets (dict "name" .) }}
{{- else }}
{{- $secrets = append $secrets . }}
{{- end }}
{{- end }}
{{- toYaml $secrets }}
{{- end }}
