// Starts Swagger UI on /docs (app/spa.py serves the page, which allows no inline script).
// No validator badge: it would send the schema to validator.swagger.io, off this server.
window.addEventListener('load', () => {
  window.ui = window.SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    validatorUrl: null,
    deepLinking: true,
    layout: 'BaseLayout',
    presets: [window.SwaggerUIBundle.presets.apis],
  })
})
