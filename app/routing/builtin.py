"""The policy that ships with Corpus (issue #14): personas and their workspaces, earlier
meaning higher priority, and the workspaces' licenses. Data only: the policy file and the
admins' overrides layer on top of it (`app.routing.policy`)."""

from __future__ import annotations

from typing import Final

PROPRIETARY: Final = "PROPRIETARY"

PERSONAS: Final[dict[str, tuple[str, ...]]] = {
    "pugi": ("web_platform", "ui_registry", "a11y_baseline"),
    "hiroshi": ("framework_nestjs", "framework_nextjs", "framework_prisma", "web_platform"),
    "marcus": ("architect-playbook", "engineering-standards", "ai_sdk_cookbook", "db_vector"),
    "olivia": ("landing_templates", "design_radix", "ui_registry"),
    "priya": ("security_baseline", "a11y_baseline"),
    "omar": ("engineering-standards", "web_platform"),
    "diego": ("devops-handbook", "framework_mastra"),
    "sigma": ("security_baseline", "engineering-standards"),
    "sofia": ("mira_knowledge", "bas-business-patterns-2026-05-23"),
    "yuki": ("ui_registry", "design_radix", "a11y_baseline"),
    "daniel": ("engineering-standards", "devops-handbook"),
    "tom": ("framework_nextjs", "ui_registry", "design_radix", "web_platform"),
    "anika": ("engineering-standards", "security_baseline"),
    "hannah": ("bas-business-patterns-2026-05-23",),
    "mateo": ("mira_knowledge", "bas-business-patterns-2026-05-23"),
    "lena": ("bas-business-patterns-2026-05-23",),
}

LICENSES: Final[dict[str, str]] = {
    "web_platform": "CC-BY-SA-2.5",
    "security_baseline": "CC-BY-SA-4.0",
    "ui_registry": "MIT",
    "a11y_baseline": "W3C-Document-1.0",
    "framework_nestjs": "MIT",
    "framework_nextjs": "MIT",
    "framework_mastra": "Apache-2.0",
    "framework_prisma": "Apache-2.0",
    "framework_grammy": "MIT",
    "ai_sdk_cookbook": "MIT",
    "db_vector": "PostgreSQL",
    "landing_templates": "MIT",
    "design_radix": "MIT",
    "marketing_frameworks": "OGL-UK-2.0",
    "seo_geo": "Apache-2.0",
    "mira_knowledge": PROPRIETARY,
    "bas-business-patterns-2026-05-23": PROPRIETARY,
    "architect-playbook": PROPRIETARY,
    "engineering-standards": PROPRIETARY,
    "devops-handbook": PROPRIETARY,
}
