"""The web page in a real headless Chromium against a real `errkb serve`.

Chromium and its driver come from Debian's packages (`make test` installs them); no browser
is downloaded. Selenium is pointed at /usr/bin/chromedriver so it never fetches one either.
"""

import shutil

import pytest

from errkb.api.process import serving

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
PASTE = """Traceback (most recent call last):
  File "/opt/venv/lib/python3.12/site-packages/sglang/kernels/ops/attention/flash_attention_v4.py", line 368, in flash_attn_with_kvcache
    raise NotImplementedError(
NotImplementedError: FA4 path does not support non-consecutive batch indices or left padding."""

pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="needs Debian's chromium and chromium-driver (make test installs them)")


@pytest.fixture(scope="module")
def server():
    with serving() as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                 "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    yield driver
    driver.quit()


def test_paste_a_traceback_and_see_the_record(server, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(server + "/")
    browser.find_element(By.ID, "paste").send_keys(PASTE)
    browser.find_element(By.ID, "explain").click()
    card = WebDriverWait(browser, 15).until(
        ec.presence_of_element_located((By.CSS_SELECTOR, "#results article.match")))
    assert card.get_attribute("data-id") == "sglang-fa4-kvcache-batch-idx-leftpad"
    assert "cache_batch_idx" in card.text and "Fixes" in card.text
    assert card.find_elements(By.CSS_SELECTOR, "pre code")  # fixes shown as code blocks
    browser.save_screenshot(str(tmp_path / "result.png"))

    card.find_element(By.CSS_SELECTOR, "h2 a").click()
    WebDriverWait(browser, 10).until(ec.url_contains("/errors/sglang-fa4-kvcache-batch-idx-leftpad"))
    assert "Where it is raised" in browser.find_element(By.TAG_NAME, "main").text


def test_text_without_a_known_error_says_so(server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(server + "/")
    browser.find_element(By.ID, "paste").send_keys("all good here, nothing failed")
    browser.find_element(By.ID, "explain").click()
    WebDriverWait(browser, 15).until(lambda d: "No known error" in d.find_element(By.ID, "status").text)
    assert browser.find_elements(By.CSS_SELECTOR, "#results article") == []
