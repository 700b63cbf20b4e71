from __future__ import annotations

from django.urls import re_path

from hiveserver2.http import cliservice

urlpatterns = [re_path(r"^cliservice/?$", cliservice, name="hs2-cliservice")]
