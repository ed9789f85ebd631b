package testenv

var DefaultController Controller
