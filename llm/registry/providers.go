package registry

import (
	"net/http"
	"slices"
	"strings"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/anthropic"
	"github.com/prime-agent/prime/llm/gemini"
	"github.com/prime-agent/prime/llm/openai"
	"github.com/prime-agent/prime/llm/responses"
)

// supportedAPIs are the wire APIs Prime can call.
var supportedAPIs = map[string]bool{
	llm.APIAnthropicMessages: true, llm.APIOpenAICompletions: true,
	llm.APIOpenAIResponses: true, llm.APIAzureOpenAIResponses: true,
	llm.APIGoogleGenerativeAI: true, llm.APIGoogleVertex: true,
}

func supportedList() []string {
	var out []string
	for api := range supportedAPIs {
		out = append(out, api)
	}
	slices.Sort(out)
	return out
}

// builtinProviders are the providers Prime knows without models.json, with
// the environment variables their keys come from (pi's names):
// ANTHROPIC_API_KEY, OPENAI_API_KEY, AZURE_OPENAI_API_KEY, GEMINI_API_KEY
// (or GOOGLE_API_KEY), GOOGLE_CLOUD_ACCESS_TOKEN for Vertex AI (an OAuth
// access token, e.g. from "gcloud auth print-access-token"), XAI_API_KEY,
// GROQ_API_KEY, DEEPSEEK_API_KEY, CEREBRAS_API_KEY, MISTRAL_API_KEY and
// OPENROUTER_API_KEY. Azure's endpoint is AZURE_OPENAI_BASE_URL or the
// resource AZURE_OPENAI_RESOURCE_NAME's.
func builtinProviders(getenv func(string) string, openaiBase string) []*provider {
	azureBase := strings.TrimSuffix(getenv("AZURE_OPENAI_BASE_URL"), "/")
	if azureBase == "" && getenv("AZURE_OPENAI_RESOURCE_NAME") != "" {
		azureBase = "https://" + getenv("AZURE_OPENAI_RESOURCE_NAME") + ".openai.azure.com/openai/v1"
	}
	ps := []*provider{
		{name: llm.ProviderAnthropic, api: llm.APIAnthropicMessages, baseURL: anthropic.DefaultBaseURL, apiKey: "$ANTHROPIC_API_KEY"},
		{name: llm.ProviderOpenAI, api: llm.APIOpenAIResponses, baseURL: openaiBase, apiKey: "$OPENAI_API_KEY"},
		{name: llm.ProviderAzure, api: llm.APIAzureOpenAIResponses, baseURL: azureBase, apiKey: "$AZURE_OPENAI_API_KEY"},
		{name: llm.ProviderGoogle, api: llm.APIGoogleGenerativeAI, apiKey: "$GEMINI_API_KEY", altKeys: []string{"GOOGLE_API_KEY"}},
		{name: llm.ProviderGoogleVertex, api: llm.APIGoogleVertex, apiKey: "$GOOGLE_CLOUD_ACCESS_TOKEN"},
		{name: llm.ProviderXAI, api: llm.APIOpenAIResponses, apiKey: "$XAI_API_KEY"},
		{name: llm.ProviderGroq, api: llm.APIOpenAICompletions, apiKey: "$GROQ_API_KEY"},
		{name: llm.ProviderDeepSeek, api: llm.APIOpenAICompletions, apiKey: "$DEEPSEEK_API_KEY"},
		{name: llm.ProviderCerebras, api: llm.APIOpenAICompletions, apiKey: "$CEREBRAS_API_KEY"},
		{name: llm.ProviderMistral, api: llm.APIOpenAICompletions, apiKey: "$MISTRAL_API_KEY"},
		{name: llm.ProviderOpenRouter, api: llm.APIOpenAICompletions, apiKey: "$OPENROUTER_API_KEY"},
	}
	for _, p := range ps {
		if p.baseURL == "" {
			p.baseURL = llm.ProviderBaseURL(p.name)
		}
	}
	return ps
}

// deploymentMap reads AZURE_OPENAI_DEPLOYMENT_NAME_MAP
// ("model=deployment,model=deployment").
func deploymentMap(v string) map[string]string {
	out := map[string]string{}
	for _, pair := range strings.Split(v, ",") {
		id, dep, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if ok && strings.TrimSpace(id) != "" && strings.TrimSpace(dep) != "" {
			out[strings.TrimSpace(id)] = strings.TrimSpace(dep)
		}
	}
	return out
}

// build makes the provider client for model m of provider p.
func (r *Registry) build(m llm.Model, p *provider, key string, headers map[string]string) llm.Provider {
	secret := llm.Secret(key)
	var client *http.Client = r.client
	switch m.API {
	case llm.APIAnthropicMessages:
		return anthropic.New(anthropic.Config{APIKey: secret, BaseURL: p.baseURL, HTTPOptions: llm.HTTPOptions{Headers: headers, HTTPClient: client, Retry: r.retry}})
	case llm.APIOpenAIResponses, llm.APIAzureOpenAIResponses:
		azure := m.API == llm.APIAzureOpenAIResponses
		cfg := responses.Config{APIKey: secret, BaseURL: p.baseURL, Azure: azure, HTTPOptions: llm.HTTPOptions{Headers: headers, HTTPClient: client, Retry: r.retry}}
		if azure {
			cfg.APIVersion = r.getenv("AZURE_OPENAI_API_VERSION")
			cfg.Deployments = deploymentMap(r.getenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP"))
		}
		return responses.New(cfg)
	case llm.APIGoogleGenerativeAI, llm.APIGoogleVertex:
		project := r.getenv("GOOGLE_CLOUD_PROJECT")
		if project == "" {
			project = r.getenv("GCLOUD_PROJECT")
		}
		return gemini.New(gemini.Config{APIKey: secret, BaseURL: p.baseURL, HTTPOptions: llm.HTTPOptions{Headers: headers, HTTPClient: client, Retry: r.retry},
			Vertex: m.API == llm.APIGoogleVertex, Project: project, Location: r.getenv("GOOGLE_CLOUD_LOCATION")})
	}
	return openai.New(openai.Config{APIKey: secret, BaseURL: p.baseURL, HTTPOptions: llm.HTTPOptions{Headers: headers, HTTPClient: client, Retry: r.retry}})
}
